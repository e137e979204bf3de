import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';

export interface LeaseMonitorRounds {
  /** The migrations the monitor cut short so far (`project/name`). */
  readonly switched: readonly string[];
  /** Stops after the invocation under way; rejects with what failed an invocation. */
  stop(): Promise<void>;
}

/**
 * The lease monitor's rounds while a test runs (its schedule is off in the test stack): invoked again and
 * again, five rounds a second apart each time, until stopped.
 */
export function startLeaseMonitorRounds(options: {
  lambda: LambdaClient;
  /** The stack's `LeaseMonitorFunctionName` output. */
  functionName: string | undefined;
}): LeaseMonitorRounds {
  const { functionName } = options;
  if (functionName === undefined) throw new Error('the stack has no LeaseMonitorFunctionName output');
  let done = false;
  const switched: string[] = [];
  const loop = (async () => {
    while (!done) {
      const res = await options.lambda.send(
        new InvokeCommand({
          FunctionName: functionName,
          Payload: Buffer.from(JSON.stringify({ rounds: 5, intervalSeconds: 1 })),
        }),
      );
      const body = Buffer.from(res.Payload ?? new Uint8Array()).toString();
      if (res.FunctionError) throw new Error(`the lease monitor failed: ${body}`);
      switched.push(...((JSON.parse(body || '{}') as { switched?: string[] }).switched ?? []));
    }
  })();
  return {
    switched,
    stop: async () => {
      done = true;
      await loop;
    },
  };
}
