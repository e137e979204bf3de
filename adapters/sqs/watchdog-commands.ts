import { COMMAND_API_VERSION, seedCommandSchema, type SeedCommand } from '../../core/commands/schema.js';
import type { WatchdogCommandSender } from '../../core/dwd/watchdog-round.js';
import type { WatchdogCommand } from '../../core/dwd/watchdog-store.js';
import type { Shoot } from '../../core/model/shoot.js';
import type { SqsSeedCommandQueues } from './seed-command-queues.js';

/**
 * Sends the watchdog's scale and restart commands to the seed's queue, one protocol command per
 * action, in the order decided (the FIFO group keeps it). They carry no task token: the watchdog
 * does not wait for the agent, it sees the result in the next heartbeats.
 */
export class SqsWatchdogCommands implements WatchdogCommandSender {
  constructor(private readonly options: { queues: Pick<SqsSeedCommandQueues, 'send'>; now?: () => Date }) {}

  async send(options: { seedName: string; shoot: Shoot; commandId: string; actions: WatchdogCommand[] }): Promise<void> {
    const issuedAt = (this.options.now?.() ?? new Date()).toISOString();
    for (const command of watchdogCommands({ ...options, issuedAt })) await this.options.queues.send(options.seedName, command);
  }
}

/** The protocol commands for one watchdog decision; ids `<decision>/<index>` so that a resend is recognised. */
export function watchdogCommands(options: { seedName: string; shoot: Shoot; commandId: string; actions: WatchdogCommand[]; issuedAt: string }): SeedCommand[] {
  const { project, name } = options.shoot.metadata;
  return options.actions.map((action, index) =>
    seedCommandSchema.parse({
      apiVersion: COMMAND_API_VERSION,
      commandId: `${options.commandId}/${index}`,
      shoot: { project, name, technicalID: options.shoot.status.technicalID },
      seed: options.seedName,
      issuedAt: options.issuedAt,
      ...(action.action === 'scale'
        ? { type: 'scale', component: action.component, replicas: action.replicas, reason: 'dependency-watchdog prober' }
        : { type: 'restart', pod: action.pod, dependency: action.dependency }),
    }),
  );
}
