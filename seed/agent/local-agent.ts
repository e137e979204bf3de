import { Route53Client } from '@aws-sdk/client-route-53';
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { AwsCredentialIdentity } from '@smithy/types';
import type { GardenClient } from '../../adapters/http/garden-client.js';
import { Route53OwnerLookup } from '../../adapters/route53/owner-lookup.js';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { S3BlobStore } from '../../adapters/s3/blob-store.js';
import { s3Api } from '../../adapters/s3/s3-api.js';
import { S3SnapshotStore } from '../../adapters/s3/snapshot-store.js';
import { checkOwner, ownerRecordName, type OwnerCheckResult } from '../../core/ownership/index.js';
import { ownerLookup } from '../backup-restore/aws.js';
import { SeedAgent } from './agent.js';
import { ControlPlaneRuntime } from './control-plane-runtime.js';
import { LocalHosting, type LocalHostingOptions, type LocalOwnerConfig } from './local-hosting.js';
import { sfnTaskAnswers } from './task-answers.js';

export interface LocalSeedAgentOptions {
  seed: string;
  garden: GardenClient;
  aws: {
    endpoint?: string;
    region: string;
    credentials?: AwsCredentialIdentity | (() => Promise<AwsCredentialIdentity>);
    /** Per-service endpoints over `endpoint` (tests route each through its own cuttable proxy); the sidecars get `s3` and `route53`. */
    endpoints?: { sqs?: string; sfn?: string; s3?: string; route53?: string };
  };
  owner: LocalOwnerConfig;
  /** The seed's backup bucket, checked for the BackupBucketsReady condition. */
  backupBucket?: string;
  workDir: string;
  heartbeatIntervalMs?: number;
  pollWaitSeconds?: number;
  sidecar?: LocalHostingOptions['sidecar'];
  cliCommand?: readonly string[];
  /** Environment of the sidecar processes; default this process's (plus the credentials when given as a value). */
  env?: NodeJS.ProcessEnv;
  log?: (entry: Record<string, unknown>) => void;
}

/**
 * A seed agent with the `local` runtime, wired to AWS (or the emulator): SQS for commands, Step
 * Functions for answers, S3 for backups and the state bucket, the owner record for restores.
 */
export function localSeedAgent(options: LocalSeedAgentOptions): { agent: SeedAgent; hosting: () => LocalHosting } {
  const aws = { region: options.aws.region, ...(options.aws.endpoint ? { endpoint: options.aws.endpoint } : {}), ...(options.aws.credentials ? { credentials: options.aws.credentials } : {}) };
  const endpoints = options.aws.endpoints ?? {};
  const to = (service: keyof typeof endpoints) => (endpoints[service] ? { ...aws, endpoint: endpoints[service] } : aws);
  const s3Endpoint = endpoints.s3 ?? options.aws.endpoint;
  const route53Endpoint = endpoints.route53 ?? options.aws.endpoint;
  const s3 = s3Api(new S3Client({ ...to('s3'), forcePathStyle: s3Endpoint !== undefined }));
  // API mode on the agent's own client, so that its credentials apply (the sidecars get theirs from the environment).
  const lookup =
    options.owner.mode === 'api'
      ? new Route53OwnerLookup(new Route53OwnerRecords({ hostedZoneId: options.owner.hostedZoneId, api: route53Api(new Route53Client(to('route53'))) }))
      : ownerLookup({ mode: 'dns', ...(options.owner.servers ? { servers: options.owner.servers } : {}) });
  let hosting: LocalHosting | undefined;
  const agent = new SeedAgent({
    seed: options.seed,
    garden: options.garden,
    sqs: new SQSClient(to('sqs')),
    answers: sfnTaskAnswers(new SFNClient(to('sfn'))),
    ...(options.heartbeatIntervalMs === undefined ? {} : { heartbeatIntervalMs: options.heartbeatIntervalMs }),
    ...(options.pollWaitSeconds === undefined ? {} : { pollWaitSeconds: options.pollWaitSeconds }),
    ...(options.log ? { log: options.log } : {}),
    ...(options.backupBucket ? { backupBucketReady: () => s3.headBucket({ Bucket: options.backupBucket }).then(() => true) } : {}),
    runtime: ({ identity }) => {
      hosting = new LocalHosting({
        identity,
        workDir: options.workDir,
        aws: {
          region: options.aws.region,
          ...(s3Endpoint ? { endpoint: s3Endpoint } : {}),
          ...(route53Endpoint && route53Endpoint !== s3Endpoint ? { route53Endpoint } : {}),
        },
        owner: options.owner,
        ...(options.sidecar ? { sidecar: options.sidecar } : {}),
        ...(options.cliCommand ? { cliCommand: options.cliCommand } : {}),
        ...(options.env ? { env: options.env } : {}),
      });
      return new ControlPlaneRuntime({
        seed: options.seed,
        hosting,
        blobStore: (bucket) => new S3BlobStore({ bucket, api: s3 }),
        snapshotStore: (bucket) => new S3SnapshotStore({ bucket, api: s3 }),
        ownerCheck: async (shoot): Promise<OwnerCheckResult> => {
          const name = ownerRecordName({ shoot: shoot.name, project: shoot.project, internalDomain: options.owner.internalDomain });
          return checkOwner({ outcome: await lookup.lookup(name), identity }).result;
        },
      });
    },
  });
  return {
    agent,
    hosting: () => {
      if (!hosting) throw new Error('the agent has not started yet');
      return hosting;
    },
  };
}
