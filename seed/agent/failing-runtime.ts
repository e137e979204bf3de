import type { CommandOf, CommandResult, CommandType } from '../../core/commands/index.js';
import type { HostedControlPlane } from '../../core/model/seed.js';
import { AgentCommandError } from './errors.js';
import type { SeedRuntime } from './runtime.js';

/** A runtime that fails every command with RuntimeUnavailable and hosts nothing: for the agent's fault tests. */
export class FailingSeedRuntime implements SeedRuntime {
  constructor(private readonly message = 'the runtime is unavailable (FailingSeedRuntime)') {}

  async execute<T extends CommandType>(command: CommandOf<T>): Promise<CommandResult<T>> {
    throw new AgentCommandError('RuntimeUnavailable', `${command.type} ${command.commandId}: ${this.message}`);
  }

  async controlPlanes(): Promise<HostedControlPlane[]> {
    return [];
  }

  async stop(): Promise<void> {}
}
