import type { AwsCredentialIdentity } from '@smithy/types';
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { DescribeExecutionCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { inject } from 'vitest';
import { S3SnapshotStore } from '../../../adapters/s3/snapshot-store.js';
import { s3Api } from '../../../adapters/s3/s3-api.js';
import { makeSnapshot, type SnapshotFields } from '../../../core/snapshots/index.js';
import type { Deployment, GardenOutputs } from '../../../local/deploy.js';
import { until } from '../../../harness/until.js';
import { emulatorCredentials } from '../../../local/aws-env.js';

/** The outputs the snapshot copy and the ownership audit add to the stack. */
export interface OwnershipOutputs {
  CopySnapshotsStateMachineArn: string;
  OwnershipAuditFunctionName: string;
  OwnershipCheckFunctionName: string;
}

export function deployed(): {
  deployment: Deployment;
  outputs: GardenOutputs & OwnershipOutputs;
  awsConfig: { endpoint: string; region: string; credentials: AwsCredentialIdentity };
} {
  const deployment = inject('deployment');
  return {
    deployment,
    outputs: deployment.outputs as GardenOutputs & OwnershipOutputs,
    awsConfig: { endpoint: deployment.awsEndpoint, region: deployment.region, credentials: emulatorCredentials() },
  };
}

export function unique(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

export function s3Client(): S3Client {
  return new S3Client({ ...deployed().awsConfig, forcePathStyle: true });
}

/** A fresh backup bucket named as seeds name theirs (the copy functions may only touch `gl-backup-*`). */
export async function backupBucket(s3: S3Client, label: string): Promise<S3SnapshotStore> {
  const bucket = unique(`gl-backup-it-${label}`);
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return new S3SnapshotStore({ bucket, api: s3Api(s3), multipartThresholdBytes: 5 * 1024 * 1024 });
}

/** Writes a snapshot object with deterministic content of `size` bytes; returns its key. */
export async function putSnapshot(store: S3SnapshotStore, fields: SnapshotFields, size = 64): Promise<string> {
  const snapshot = makeSnapshot(fields);
  const body = new Uint8Array(size);
  for (let i = 0; i < size; i++) body[i] = (i * 31 + fields.lastRevision) & 0xff;
  await store.put(snapshot.key, body);
  return snapshot.key;
}

export interface ExecutionResult {
  status: string;
  output: Record<string, unknown> | undefined;
  error: string | undefined;
  cause: string | undefined;
  startedAt: number;
  stoppedAt: number;
}

/** Runs the copy-snapshots state machine to its end. */
export async function runCopy(input: Record<string, unknown>, timeoutMs = 110_000): Promise<ExecutionResult> {
  const { outputs, awsConfig } = deployed();
  const sfn = new SFNClient(awsConfig);
  const started = await sfn.send(
    new StartExecutionCommand({
      stateMachineArn: outputs.CopySnapshotsStateMachineArn,
      input: JSON.stringify(input),
      name: unique('copy'),
    }),
  );
  return executionEnd(sfn, started.executionArn!, timeoutMs);
}

/** How an execution ended, once it has. */
export async function executionEnd(sfn: SFNClient, executionArn: string, timeoutMs: number): Promise<ExecutionResult> {
  const d = await until(
    `execution ${executionArn} to end`,
    async () => {
      const d = await sfn.send(new DescribeExecutionCommand({ executionArn }));
      return d.status !== 'RUNNING' && d;
    },
    { timeoutMs, intervalMs: 250 },
  );
  return {
    status: d.status ?? 'UNKNOWN',
    output: d.output ? (JSON.parse(d.output) as Record<string, unknown>) : undefined,
    error: d.error,
    cause: d.cause,
    startedAt: d.startDate?.getTime() ?? 0,
    stoppedAt: d.stopDate?.getTime() ?? 0,
  };
}

/** The error message inside a Lambda task failure's cause (a JSON document). */
export function causeMessage(cause: string | undefined): string {
  if (cause === undefined) return '';
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: string };
    return parsed.errorMessage ?? cause;
  } catch {
    return cause;
  }
}
