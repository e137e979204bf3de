import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as route53 from 'aws-cdk-lib/aws-route53';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { GardenFunction } from './garden-function.js';
import { apiDomainEnvironment, grantApiRecords, type ApiDomain } from './api-domain.js';
import { acknowledge, acknowledgeTableIndexes, grantTaskFunctions, nagArn } from './nag.js';
import { grantShootSecrets } from './shoot-secrets.js';
import { waitForFinalTimeout, type OwnershipTimings } from '../core/ownership/index.js';

const ROOT = resolve(import.meta.dirname, '..');
/** The states that wait for a seed agent's answer. */
const COMMAND_STATES = [
  'RestoreEtcdAhead',
  'RefreshEtcdAhead',
  'MigrateExtensions',
  'DeleteSourceControlPlane',
  'RestoreEtcd',
  'RestoreExtensions',
  'SurveyLive',
  'WalkLive',
  'WalkLiveSourceLost',
  'WalkLiveDestinationLost',
  'WalkBack',
  'FinishLive',
  'RetireSource',
] as const;

export interface MigrationProps {
  logRetention: logs.RetentionDays;
  table: dynamodb.ITableV2;
  bus: events.IEventBus;
  zone: route53.IHostedZone;
  stateBucket: s3.IBucket;
  internalDomain: string;
  /** The API records the switch step writes. */
  apiDomain: ApiDomain;
  seedQueuePrefix: string;
  backupBucketPrefix: string;
  /** The migrate-shoot state machine's name (the API looks at its executions by name). */
  name: string;
  copySnapshots: sfn.IStateMachine;
  /** Its name, for the permissions on its executions. */
  copySnapshotsName: string;
  /** Wraps the shoots' secrets: restore-etcd carries them, resealed for the destination. */
  shootSecretsKey: kms.IKey;
  /** How long a migration step waits for a seed agent's answer. Default 5 minutes. */
  commandTimeout?: Duration;
  /** How long the good path waits for the source's final snapshot. Default 10 minutes. */
  waitFinalSnapshot?: Duration;
  /** The seed agents' heartbeat interval, for choosing the path. Default 10 seconds. */
  heartbeatInterval?: Duration;
  /**
   * The seeds' ownership timings, from which the copy's fence bound follows; they must be what the seeds'
   * sidecars run. Default: the design's.
   */
  ownershipTimings?: Partial<OwnershipTimings>;
  /**
   * How long the copy waits for the final snapshot of a source whose agent reported no settings of its
   * sidecars (an older agent, the `kubernetes` runtime), from the copy's start; a source that reported them
   * is waited for by its bounds (docs/design.md section 4, "Copy"). Default 10 minutes, or the fence bound
   * when that is longer; a shorter wait than the fence bound is refused at synthesis (it could activate a
   * copy while the source still accepts writes).
   */
  copyWaitForFinal?: Duration;
}

/**
 * The migrate-shoot state machine (`state-machines/migrate-shoot.asl.json`, loaded as data with the
 * functions' ARNs substituted and the command timeouts set) and its four task functions, each with
 * only what its steps touch.
 */
export class Migration extends Construct {
  readonly stateMachine: sfn.StateMachine;
  readonly functions: Readonly<Record<'steps' | 'owner' | 'finalSnapshot' | 'dispatch', GardenFunction>>;

  constructor(scope: Construct, id: string, props: MigrationProps) {
    super(scope, id);
    const commandTimeout = props.commandTimeout ?? Duration.minutes(5);
    const common = { TABLE_NAME: props.table.tableName, EVENT_BUS_NAME: props.bus.eventBusName };
    const fn = (name: string, entry: string, description: string, environment: Record<string, string>) => {
      const f = new GardenFunction(this, name, {
        entry: `functions/migration/${entry}`,
        description,
        logRetention: props.logRetention,
        timeout: Duration.seconds(60),
        environment: { ...common, ...environment },
      });
      // Every step reads the shoot and its seeds and writes the migration record under its lock.
      props.table.grantReadWriteData(f.function);
      acknowledgeTableIndexes(f.role, props.table);
      props.bus.grantPutEventsTo(f.function);
      return f;
    };
    this.functions = {
      steps: fn(
        'Steps',
        'garden-steps.ts',
        'migrate-shoot: the garden steps (path, pre-copy and copy bookkeeping, ShootState, finalize, failure)',
        {
          HEARTBEAT_INTERVAL_MS: String((props.heartbeatInterval ?? Duration.seconds(10)).toMilliseconds()),
          ...(props.ownershipTimings ? { OWNERSHIP_TIMINGS: JSON.stringify(props.ownershipTimings) } : {}),
          COPY_WAIT_FOR_FINAL_MS: String(copyWaitForFinal(props)),
        },
      ),
      owner: fn(
        'Owner',
        'owner.ts',
        'migrate-shoot: delete the owner record, set it to the destination (each followed by a notice to the source), switch the API record',
        {
          HOSTED_ZONE_ID: props.zone.hostedZoneId,
          INTERNAL_DOMAIN: props.internalDomain,
          ...apiDomainEnvironment(props.apiDomain),
        },
      ),
      finalSnapshot: fn('FinalSnapshot', 'final-snapshot.ts', "migrate-shoot: look for the source's final snapshot", {
        WAIT_FINAL_SNAPSHOT_MS: String((props.waitFinalSnapshot ?? Duration.minutes(10)).toMilliseconds()),
      }),
      dispatch: fn('Dispatch', 'dispatch.ts', "migrate-shoot: send a step's command to a seed agent", {
        STATE_BUCKET: props.stateBucket.bucketName,
        EXTERNAL_DOMAIN: props.apiDomain.externalDomain,
        COMMAND_TIMEOUT_SECONDS: String(commandTimeout.toSeconds()),
      }),
    };
    grantShootSecrets(this.functions.dispatch, props.shootSecretsKey);
    this.functions.owner.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['route53:ListResourceRecordSets', 'route53:ChangeResourceRecordSets'],
        resources: [props.zone.hostedZoneArn],
      }),
    );
    grantApiRecords(this.functions.owner.role, props.apiDomain, { write: true });
    // Owner-change notices (check-owner) go to the source seed's queue right after each change.
    this.functions.owner.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['sqs:SendMessage'],
        resources: [Stack.of(this).formatArn({ service: 'sqs', resource: `${props.seedQueuePrefix}*` })],
      }),
    );
    acknowledge(
      this.functions.owner.role,
      `IAM5[Resource::${nagArn(this, 'sqs', `${props.seedQueuePrefix}*`)}]`,
      "Owner-change notices go to the source seed's command queue; seeds are registered at run time, and sending is limited to this garden's seed queues.",
    );
    const partition = Stack.of(this).partition;
    this.functions.finalSnapshot.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [`arn:${partition}:s3:::${props.backupBucketPrefix}*`],
      }),
    );
    acknowledge(
      this.functions.finalSnapshot.role,
      `IAM5[Resource::arn:${nagPart(partition)}:s3:::${props.backupBucketPrefix}*]`,
      `Seed backup buckets are registered at run time; listing is limited to buckets named ${props.backupBucketPrefix}*.`,
    );
    this.functions.dispatch.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['sqs:SendMessage'],
        resources: [Stack.of(this).formatArn({ service: 'sqs', resource: `${props.seedQueuePrefix}*` })],
      }),
    );
    acknowledge(
      this.functions.dispatch.role,
      `IAM5[Resource::${nagArn(this, 'sqs', `${props.seedQueuePrefix}*`)}]`,
      "Seeds and their command queues are registered at run time; sending is limited to this garden's seed queues.",
    );

    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      stateMachineName: props.name,
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromString(JSON.stringify(migrateShootDefinition({ commandTimeout }))),
      definitionSubstitutions: {
        StepsFunctionArn: this.functions.steps.function.functionArn,
        OwnerFunctionArn: this.functions.owner.function.functionArn,
        FinalSnapshotFunctionArn: this.functions.finalSnapshot.function.functionArn,
        DispatchFunctionArn: this.functions.dispatch.function.functionArn,
        CopySnapshotsStateMachineArn: props.copySnapshots.stateMachineArn,
      },
      logs: { destination: logGroup, level: sfn.LogLevel.ALL, includeExecutionData: true },
      tracingEnabled: true,
    });
    grantTaskFunctions(
      this.stateMachine,
      Object.values(this.functions).map((f) => f.function),
    );
    // copy-snapshots runs as a child execution (.sync:2): start it, follow it, stop it if this one stops.
    props.copySnapshots.grantStartExecution(this.stateMachine);
    this.stateMachine.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['states:DescribeExecution', 'states:StopExecution'],
        resources: [
          Stack.of(this).formatArn({
            service: 'states',
            resource: 'execution',
            resourceName: `${props.copySnapshotsName}:*`,
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ],
      }),
    );
    acknowledge(
      this.stateMachine,
      `IAM5[Resource::${nagArn(this, 'states', `execution:${props.copySnapshotsName}:*`)}]`,
      'Following a copy-snapshots child execution (.sync) needs its executions, whose names are generated per run.',
    );
    this.stateMachine.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'],
        resources: [
          Stack.of(this).formatArn({
            service: 'events',
            resource: 'rule',
            resourceName: 'StepFunctionsGetEventsForStepFunctionsExecutionRule',
          }),
        ],
      }),
    );
  }
}

/** The ASL file with the seed-command timeouts of this deployment: the file stays the one source of the flow. */
export function migrateShootDefinition(options: { commandTimeout: Duration }): Record<string, unknown> {
  const asl = JSON.parse(readFileSync(join(ROOT, 'state-machines', 'migrate-shoot.asl.json'), 'utf8')) as {
    States: Record<string, Record<string, unknown>>;
  };
  const timeout = options.commandTimeout.toSeconds();
  for (const name of COMMAND_STATES) {
    const state = asl.States[name];
    if (!state) throw new Error(`migrate-shoot.asl.json has no state ${name}`);
    state.TimeoutSeconds = timeout;
    // Agents heartbeat while they work; a silent one is given up before the full timeout.
    state.HeartbeatSeconds = Math.max(1, Math.min(timeout, Number(state.HeartbeatSeconds ?? timeout)));
  }
  return asl;
}

function nagPart(partition: string): string {
  return partition.startsWith('${Token') ? '<AWS::Partition>' : partition;
}

/** The copy's fixed wait for a final snapshot in ms: never shorter than the fence bound of the seeds' timings. */
function copyWaitForFinal(props: Pick<MigrationProps, 'ownershipTimings' | 'copyWaitForFinal'>): number {
  return waitForFinalTimeout({ timings: props.ownershipTimings, wait: props.copyWaitForFinal?.toMilliseconds() })
    .waitForFinalTimeout;
}
