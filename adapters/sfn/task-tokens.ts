import { SendTaskFailureCommand, SFNClient } from '@aws-sdk/client-sfn';
import { awsErrorName } from '../aws-errors.js';
import type { TaskTokens } from '../../core/migration/source-waits.js';

/** Step Functions errors that mean the task is no longer waiting on this token (answered, timed out, or the execution ended). */
const GONE = new Set(['TaskTimedOut', 'TaskDoesNotExist', 'InvalidToken']);

/** Fails waiting tasks by token (SendTaskFailure), as the lease monitor does for a source that went silent. */
export class SfnTaskTokens implements TaskTokens {
  private readonly client: SFNClient;
  constructor(options: { client?: SFNClient } = {}) {
    this.client = options.client ?? new SFNClient({});
  }

  async fail(options: { taskToken: string; error: string; cause: string }): Promise<'failed' | 'gone'> {
    try {
      await this.client.send(
        new SendTaskFailureCommand({
          taskToken: options.taskToken,
          error: options.error,
          cause: options.cause.slice(0, 32_768),
        }),
      );
      return 'failed';
    } catch (error) {
      if (GONE.has(awsErrorName(error))) return 'gone';
      throw error;
    }
  }
}
