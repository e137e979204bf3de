import {
  SendTaskFailureCommand,
  SendTaskHeartbeatCommand,
  SendTaskSuccessCommand,
  type SFNClient,
} from '@aws-sdk/client-sfn';
import type { CommandAnswer } from './ledger.js';

/** The three Step Functions task calls the agent makes; a seam so the agent's loop can be tested without AWS. */
export interface TaskAnswers {
  success(token: string, output: string): Promise<void>;
  failure(token: string, error: string, cause: string): Promise<void>;
  heartbeat(token: string): Promise<void>;
}

export function sfnTaskAnswers(client: SFNClient): TaskAnswers {
  return {
    success: async (taskToken, output) => void (await client.send(new SendTaskSuccessCommand({ taskToken, output }))),
    failure: async (taskToken, error, cause) =>
      void (await client.send(new SendTaskFailureCommand({ taskToken, error, cause }))),
    heartbeat: async (taskToken) => void (await client.send(new SendTaskHeartbeatCommand({ taskToken }))),
  };
}

/** Sends one recorded answer to one token. */
export async function sendAnswer(answers: TaskAnswers, token: string, answer: CommandAnswer): Promise<void> {
  if (answer.kind === 'success') await answers.success(token, JSON.stringify(answer.output));
  else await answers.failure(token, answer.error, answer.cause);
}
