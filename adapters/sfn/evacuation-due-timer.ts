import { ExecutionAlreadyExists, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { createHash } from 'node:crypto';
import type { EvacuationDueTimer } from '../../core/evacuation/round.js';

/**
 * The `after` clock as executions of the evacuation-due state machine (state-machines/evacuation-due.asl.json):
 * each waits until its moment and puts EvacuationDue on the bus. One execution per seed and moment, by its
 * name: the next round's start of the same one is a no-op.
 */
export class StepFunctionsEvacuationDueTimer implements EvacuationDueTimer {
  private readonly client: SFNClient;
  constructor(private readonly options: { stateMachineArn: string; client?: SFNClient }) {
    this.client = options.client ?? new SFNClient({});
  }

  async wakeAt(seed: string, dueAt: string): Promise<void> {
    try {
      await this.client.send(
        new StartExecutionCommand({
          stateMachineArn: this.options.stateMachineArn,
          name: dueExecutionName(seed, dueAt),
          input: JSON.stringify({ seed, dueAt }),
        }),
      );
    } catch (error) {
      if (!(error instanceof ExecutionAlreadyExists)) throw error;
    }
  }
}

/** At most 80 characters of [A-Za-z0-9-]: the seed's name (cut), the moment's digits and a hash of both. */
export function dueExecutionName(seed: string, dueAt: string): string {
  const digits = dueAt.replace(/[^0-9]/g, '').slice(0, 17);
  const hash = createHash('sha256').update(`${seed}|${dueAt}`).digest('hex').slice(0, 8);
  return `${seed.slice(0, 40)}-${digits}-${hash}`;
}
