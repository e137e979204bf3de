import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import type { PartitionOutcome, PartitionRequest, PartitionRunner } from '../../core/dwd/fan-out-round.js';

/** A watchdog partition as a synchronous invocation of the partition function (its own execution environment). */
export class LambdaPartitionRunner implements PartitionRunner {
  constructor(private readonly options: { client: LambdaClient; functionName: string }) {}

  async run(request: PartitionRequest): Promise<PartitionOutcome> {
    const res = await this.options.client.send(
      new InvokeCommand({
        FunctionName: this.options.functionName,
        InvocationType: 'RequestResponse',
        Payload: Buffer.from(JSON.stringify(request)),
      }),
    );
    const body = Buffer.from(res.Payload ?? new Uint8Array()).toString('utf8');
    if (res.FunctionError)
      throw new Error(`partition of ${request.seeds.length} seed(s) failed: ${body.slice(0, 500)}`);
    return JSON.parse(body) as PartitionOutcome;
  }
}
