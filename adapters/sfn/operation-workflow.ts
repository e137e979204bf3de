import { ExecutionAlreadyExists, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { OperationWorkflow } from '../../core/garden/lifecycle-controller.js';
import type { OperationRef } from '../../core/garden/operation-steps.js';

/** operate-shoot executions; one name per operation makes a repeated start a no-op. */
export class StepFunctionsOperationWorkflow implements OperationWorkflow {
  private readonly client: SFNClient;
  constructor(private readonly options: { stateMachineArn: string; client?: SFNClient }) {
    this.client = options.client ?? new SFNClient({});
  }

  async start(options: { name: string; input: { ref: OperationRef } }): Promise<void> {
    try {
      await this.client.send(
        new StartExecutionCommand({
          stateMachineArn: this.options.stateMachineArn,
          name: options.name,
          input: JSON.stringify(options.input),
        }),
      );
    } catch (error) {
      // The operation has its execution already (a repeated event, or the resync).
      if (!(error instanceof ExecutionAlreadyExists)) throw error;
    }
  }
}
