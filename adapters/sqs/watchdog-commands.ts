import type { WatchdogCommandSender } from '../../core/dwd/watchdog-round.js';
import type { WatchdogCommand } from '../../core/dwd/watchdog-store.js';
import type { Shoot } from '../../core/model/shoot.js';
import type { SqsSeedCommandQueues } from './seed-command-queues.js';

/**
 * Sends the watchdog's scale and restart commands to the seed's queue, one message per decision, in
 * the order decided (scale-down order matters). They carry no task token: the watchdog does not wait.
 */
export class SqsWatchdogCommands implements WatchdogCommandSender {
  constructor(private readonly options: { queues: Pick<SqsSeedCommandQueues, 'send'>; now?: () => Date }) {}

  async send(options: { seedName: string; shoot: Shoot; commandId: string; actions: WatchdogCommand[] }): Promise<void> {
    await this.options.queues.send(options.seedName, watchdogCommandMessage({ ...options, issuedAt: (this.options.now?.() ?? new Date()).toISOString() }));
  }
}

export function watchdogCommandMessage(options: { shoot: Shoot; commandId: string; actions: WatchdogCommand[]; issuedAt: string }): Record<string, unknown> {
  const { project, name } = options.shoot.metadata;
  return {
    apiVersion: 'commands.gardenless.io/v1',
    kind: 'watchdog',
    commandId: options.commandId,
    issuedAt: options.issuedAt,
    shoot: { project, name, technicalID: options.shoot.status.technicalID },
    actions: options.actions,
  };
}
