import type { CommandOf, CommandResult, CommandType, SeedCommand } from '../../core/commands/index.js';
import type { HostedControlPlane, SeedCapability } from '../../core/model/seed.js';

/**
 * What the seed agent acts on (docs/design.md section 9): `execute` does what one command asks and returns the
 * protocol result, or throws `AgentCommandError` with the failure name to answer; `controlPlanes`
 * observes (probes) every hosted control plane for the seed heartbeat. Implementations: the one
 * `ControlPlaneRuntime` over a hosting (`LocalHosting`: processes; `KubernetesHosting`: objects on a seed
 * cluster; `MemoryHosting`: flags), and `FailingSeedRuntime` for fault tests.
 */
export interface SeedRuntime {
  execute<T extends CommandType>(command: CommandOf<T>, signal?: AbortSignal): Promise<CommandResult<T>>;
  controlPlanes(): Promise<HostedControlPlane[]>;
  /** What this runtime can do beyond the commands every runtime answers, for the heartbeat (none when absent). */
  capabilities?(): SeedCapability[];
  /** Stops every process the runtime started. */
  stop(): Promise<void>;
  /** Control planes a previous agent on this seed left recorded (the `local` runtime keeps them on disk). */
  recorded?(): Promise<string[]>;
  /** Takes one recorded control plane back, its processes started from their data; false when there is none. */
  adopt?(technicalID: string): Promise<boolean>;
}

export type { SeedCommand };
