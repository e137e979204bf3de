import { KMSClient } from '@aws-sdk/client-kms';
import { Route53Client } from '@aws-sdk/client-route-53';
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { AwsCredentialIdentity } from '@smithy/types';
import type { GardenClient } from '../../adapters/http/garden-client.js';
import { KmsDataKeys, kmsApi } from '../../adapters/kms/data-keys.js';
import { openSecrets, seedContext } from '../../core/shootstate/sealed.js';
import { Route53OwnerLookup } from '../../adapters/route53/owner-lookup.js';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { S3BlobStore } from '../../adapters/s3/blob-store.js';
import { s3Api } from '../../adapters/s3/s3-api.js';
import { S3SnapshotStore } from '../../adapters/s3/snapshot-store.js';
import type { ActuatorSet, MemoryExtensionWorld } from '../../core/extensions/index.js';
import { chooseZones } from '../../core/ha/zones.js';
import type { SeedSpec } from '../../core/model/seed.js';
import { lookUpOwner, ownerRecordName, type OwnerCheckResult } from '../../core/ownership/index.js';
import { ownerLookup } from '../backup-restore/aws.js';
import { SeedAgent, type SeedAgentOptions } from './agent.js';
import { ControlPlaneRuntime } from './control-plane-runtime.js';
import type { ControlPlaneHosting } from './hosting.js';
import { sqsCommandInbox, type CommandInbox } from './inbox.js';
import type { PlaneStore } from './plane-store.js';
import type { SeedRuntime } from './runtime.js';
import { sfnTaskAnswers, type TaskAnswers } from './task-answers.js';

/** How a seed finds the owner record: the Route 53 API (the emulator serves no DNS) or DNS. */
export type OwnerConfig =
  | { mode: 'api'; hostedZoneId: string; internalDomain: string }
  | { mode: 'dns'; internalDomain: string; servers?: readonly string[] };

export interface AwsAccess {
  /** The emulator's endpoint; absent for AWS. */
  endpoint?: string;
  region: string;
  credentials?: AwsCredentialIdentity | (() => Promise<AwsCredentialIdentity>);
  /** Per-service endpoints over `endpoint` (tests route each through its own cuttable proxy). */
  endpoints?: { sqs?: string; sfn?: string; s3?: string; route53?: string; kms?: string };
}

/** What the AWS wiring hands a runtime: the buckets on S3 and the restore's owner check. */
export interface RuntimeContext {
  identity: string;
  blobStore: (bucket: string) => S3BlobStore;
  snapshotStore: (bucket: string) => S3SnapshotStore;
  ownerCheck?: (shoot: { name: string; project: string }) => Promise<OwnerCheckResult>;
}

export interface AwsSeedAgentOptions extends Pick<SeedAgentOptions, 'seed' | 'garden' | 'heartbeatIntervalMs' | 'log'> {
  garden: GardenClient;
  aws: AwsAccess;
  /** Restores activate only while the owner record names this seed; without it they do not check. */
  owner?: OwnerConfig;
  /** The seed's backup bucket, checked for the BackupBucketsReady condition. */
  backupBucket?: string;
  /** SQS long-poll wait; default 5 s (stop() aborts it). */
  pollWaitSeconds?: number;
  /** What runs the control planes, built once the agent knows its identity. */
  hosting?: (identity: string) => ControlPlaneHosting;
  /** Instead of `hosting`: a runtime of its own (the kubernetes runtime), given the same buckets and owner check. */
  runtime?: (context: RuntimeContext) => SeedRuntime;
  /** The world outside the seed that extensions act on; default one of the runtime's own. */
  world?: MemoryExtensionWorld;
  actuators?: ActuatorSet;
  /** With `hosting`: where each control plane's record outlives the agent (see ControlPlaneRuntimeOptions.planeStore). */
  planeStore?: PlaneStore;
  /** Test seams: wrap what the agent talks to (record, delay, drop, inject failures). */
  wrap?: {
    inbox?: (inbox: CommandInbox) => CommandInbox;
    answers?: (answers: TaskAnswers) => TaskAnswers;
    runtime?: (runtime: SeedRuntime) => SeedRuntime;
  };
}

/**
 * A seed agent wired to AWS (or the emulator): SQS for commands, Step Functions for answers, S3 for
 * backups and the state bucket, the owner record for restores; the control planes run on `hosting`.
 */
export function awsSeedAgent(options: AwsSeedAgentOptions): SeedAgent {
  const aws = {
    region: options.aws.region,
    ...(options.aws.endpoint ? { endpoint: options.aws.endpoint } : {}),
    ...(options.aws.credentials ? { credentials: options.aws.credentials } : {}),
  };
  const to = (service: keyof NonNullable<AwsAccess['endpoints']>) => {
    const endpoint = options.aws.endpoints?.[service];
    return endpoint ? { ...aws, endpoint } : aws;
  };
  const s3Config = to('s3');
  const s3 = s3Api(new S3Client({ ...s3Config, forcePathStyle: s3Config.endpoint !== undefined }));
  const sqs = new SQSClient(to('sqs'));
  const answers = sfnTaskAnswers(new SFNClient(to('sfn')));
  // The shoots' secrets in commands were sealed for this seed: KMS unwraps them under its own name only.
  const dataKeys = new KmsDataKeys({ api: kmsApi(new KMSClient(to('kms'))) });
  const wrap = options.wrap ?? {};
  return new SeedAgent({
    seed: options.seed,
    garden: options.garden,
    inbox: (queueUrl) => {
      const inbox = sqsCommandInbox({
        client: sqs,
        queueUrl,
        ...(options.pollWaitSeconds === undefined ? {} : { waitSeconds: options.pollWaitSeconds }),
      });
      return wrap.inbox ? wrap.inbox(inbox) : inbox;
    },
    answers: wrap.answers ? wrap.answers(answers) : answers,
    ...(options.heartbeatIntervalMs === undefined ? {} : { heartbeatIntervalMs: options.heartbeatIntervalMs }),
    ...(options.log ? { log: options.log } : {}),
    ...(options.backupBucket
      ? { backupBucketReady: () => s3.headBucket({ Bucket: options.backupBucket }).then(() => true) }
      : {}),
    runtime: ({ identity }) => {
      const context: RuntimeContext = {
        identity,
        blobStore: (bucket) => new S3BlobStore({ bucket, api: s3 }),
        snapshotStore: (bucket) => new S3SnapshotStore({ bucket, api: s3 }),
        ...(options.owner
          ? {
              ownerCheck: restoreOwnerCheck({
                owner: options.owner,
                identity,
                route53: new Route53Client(to('route53')),
              }),
            }
          : {}),
      };
      if (!options.runtime && !options.hosting) throw new Error('awsSeedAgent needs hosting or runtime');
      const runtime =
        options.runtime?.(context) ??
        new ControlPlaneRuntime({
          seed: options.seed,
          hosting: options.hosting!(identity),
          blobStore: context.blobStore,
          snapshotStore: context.snapshotStore,
          openSecrets: (sealed, shoot) => openSecrets(sealed, dataKeys, seedContext(shoot.technicalID, options.seed)),
          ...(context.ownerCheck ? { ownerCheck: context.ownerCheck } : {}),
          zones: seedZones({ garden: options.garden, seed: options.seed }),
          ...(options.world ? { world: options.world } : {}),
          ...(options.actuators ? { actuators: options.actuators } : {}),
          ...(options.planeStore ? { planeStore: options.planeStore } : {}),
          ...(options.log ? { log: options.log } : {}),
        });
      return wrap.runtime ? wrap.runtime(runtime) : runtime;
    },
  });
}

/**
 * The zones of a control plane on this seed, as the garden's layout computes them (`chooseZones`) from the
 * seed's spec, which the agent reads from the garden (cached for a minute). Unknown zones are none.
 */
function seedZones(input: { garden: GardenClient; seed: string }) {
  let cached: { spec: SeedSpec; at: number } | undefined;
  return async ({
    technicalID,
    failureTolerance,
  }: {
    technicalID: string;
    failureTolerance: 'node' | 'zone' | undefined;
  }): Promise<readonly string[]> => {
    if (cached === undefined || Date.now() - cached.at > 60_000) {
      const res = await input.garden.request<{ spec: SeedSpec }>('GET', `/seeds/${input.seed}`).catch(() => undefined);
      if (res?.status === 200) cached = { spec: res.body.spec, at: Date.now() };
    }
    return cached ? chooseZones(cached.spec, technicalID, failureTolerance) : [];
  };
}

/** The restore's owner check; in API mode on the agent's own client, so that its credentials apply. */
function restoreOwnerCheck(input: { owner: OwnerConfig; identity: string; route53: Route53Client }) {
  const { owner, identity } = input;
  const lookup =
    owner.mode === 'api'
      ? new Route53OwnerLookup(
          new Route53OwnerRecords({ hostedZoneId: owner.hostedZoneId, api: route53Api(input.route53) }),
        )
      : ownerLookup({ mode: 'dns', ...(owner.servers ? { servers: owner.servers } : {}) });
  return async (shoot: { name: string; project: string }): Promise<OwnerCheckResult> => {
    const name = ownerRecordName({ shoot: shoot.name, project: shoot.project, internalDomain: owner.internalDomain });
    return (await lookUpOwner(lookup, { name, identity })).result;
  };
}
