import { buildCommand, commandShoot } from '../commands/build.js';
import type { SeedCommand } from '../commands/schema.js';
import type { Shoot } from '../model/shoot.js';
import type { WatchdogCommand } from './watchdog-store.js';

/** The protocol commands for one watchdog decision; ids `<decision>/<index>` so that a resend is recognised. */
export function watchdogCommands(options: {
  seedName: string;
  shoot: Shoot;
  commandId: string;
  actions: WatchdogCommand[];
  issuedAt: Date;
}): SeedCommand[] {
  return options.actions.map((action, index) => {
    const address = {
      shoot: commandShoot(options.shoot),
      seed: options.seedName,
      commandId: `${options.commandId}/${index}`,
      issuedAt: options.issuedAt,
    };
    return action.action === 'scale'
      ? buildCommand<'scale'>(address, {
          type: 'scale',
          component: action.component,
          replicas: action.replicas,
          reason: 'dependency-watchdog prober',
        })
      : buildCommand<'restart'>(address, { type: 'restart', pod: action.pod, dependency: action.dependency });
  });
}
