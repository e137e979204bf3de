import { watchdogCommands } from '../../core/dwd/seed-commands.js';
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

  async send(options: {
    seedName: string;
    shoot: Shoot;
    commandId: string;
    actions: WatchdogCommand[];
  }): Promise<void> {
    const issuedAt = this.options.now?.() ?? new Date();
    for (const command of watchdogCommands({ ...options, issuedAt }))
      await this.options.queues.send(options.seedName, command);
  }
}
