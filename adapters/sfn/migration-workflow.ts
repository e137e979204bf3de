import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import type { MigrationExecutionInput, MigrationWorkflow } from '../../core/migration/migration-admission.js';

/** migrate-shoot executions; the name makes a repeated start of the same attempt a no-op. */
export class StepFunctionsMigrationWorkflow implements MigrationWorkflow {
  private readonly client: SFNClient;
  constructor(private readonly options: { stateMachineArn: string; client?: SFNClient }) {
    this.client = options.client ?? new SFNClient({});
  }

  async start(options: { name: string; input: MigrationExecutionInput }): Promise<void> {
    try {
      await this.client.send(
        new StartExecutionCommand({
          stateMachineArn: this.options.stateMachineArn,
          name: options.name,
          input: JSON.stringify(options.input),
        }),
      );
    } catch (error) {
      // The same attempt was started already (a retried request): that execution carries it.
      if (!(error instanceof ExecutionAlreadyExists)) throw error;
    }
  }

  async ended(name: string): Promise<boolean> {
    // arn:aws:states:<region>:<account>:stateMachine:<machine> -> ...:execution:<machine>:<name>
    const executionArn = `${this.options.stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
    try {
      const execution = await this.client.send(new DescribeExecutionCommand({ executionArn }));
      return execution.status !== undefined && execution.status !== 'RUNNING' && execution.status !== 'PENDING_REDRIVE';
    } catch (error) {
      if (error instanceof ExecutionDoesNotExist) return false;
      throw error;
    }
  }
}
