import { ArnFormat, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import {
  HttpApi,
  HttpMethod,
  HttpStage,
  type IHttpRouteAuthorizer,
  HttpNoneAuthorizer,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { grantShootSecrets } from './shoot-secrets.js';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { DependencyWatchdog } from './dependency-watchdog.js';
import { Evacuation } from './evacuation.js';
import { LeaseMonitor } from './lease-monitor.js';
import { Migration } from './migration.js';
import { ShootLifecycle } from './shoot-lifecycle.js';
import { GardenFunction } from './garden-function.js';
import { OwnershipAudit } from './ownership-audit.js';
import { SnapshotCopy } from './snapshot-copy.js';
import { acknowledge, acknowledgeTableIndexes, nagArn } from './nag.js';
import { TABLE_INDEXES } from '../adapters/dynamodb/keys.js';
import type { OwnershipTimings } from '../core/ownership/index.js';
import { DEFAULT_AGENT_ROLE_PREFIX } from '../functions/api/access.js';
import { Actors } from './actors.js';
import type { ApiDomain } from './api-domain.js';
import { Operations } from './operations.js';

export interface GardenStackProps extends StackProps {
  /** The domain under which owner records live: `owner.<shoot>.<project>.<internalDomain>`. */
  internalDomain: string;
  /** The domain of the shoots' API records, `api.<shoot>.<project>.<externalDomain>`, in a zone of its own. Default `shoots.gardenless.local`. */
  externalDomain?: string;
  /** The API records' TTL: how long resolvers may keep sending clients to a seed after a switch. Default 60 s. */
  apiRecordTtl?: Duration;
  /** The dependency watchdog probes through the API domains (its DNS must serve the external zone). Default off: the load balancers. */
  watchdogProbesApiDomain?: boolean;
  /**
   * A proxy every issued kubeconfig names (`proxy-url`): the local landscape's, which resolves API domains
   * through the Route 53 zone (docs/api-domain.md). Never set on AWS, where clients resolve through DNS.
   */
  kubeconfigProxyUrl?: string;
  logRetention?: logs.RetentionDays;
  /** Seed backup buckets are named with this prefix; the snapshot copy may touch only those. Default `gl-backup-`. */
  backupBucketPrefix?: string;
  /** How often the ownership audit runs. Default 5 minutes. */
  auditInterval?: Duration;
  /** Name prefix of the per-seed command queues (`<prefix><seed>`, `<prefix><seed>-dlq`). Default `gl-seed-`. */
  seedQueuePrefix?: string;
  /** Whether EventBridge runs the dependency watchdog every minute; off where tests drive its rounds. */
  watchdogSchedule?: boolean;
  /** How long a lifecycle operation (create, reconcile, hibernate, wake, delete) waits for the seed agent's answer. Default 5 minutes. */
  operationCommandTimeout?: Duration;
  /** Whether EventBridge resyncs the shoot lifecycle every minute (pending shoots, lost operations). Default on. */
  lifecycleSchedule?: boolean;
  /** Whether EventBridge runs the seed lease monitor every minute; off where tests drive its rounds. */
  leaseMonitorSchedule?: boolean;
  /** Off for landscapes that drive the ownership audit themselves (the fleet benchmark). Default on. */
  auditSchedule?: boolean;
  /** The evacuation controller's rails and schedule (docs/design.md section 13). */
  evacuation?: { maxSeeds?: number; maxLostShare?: number; maxAttempts?: number; scheduleEnabled?: boolean };
  /** How long a migration step waits for a seed agent. Default 5 minutes; tests use seconds. */
  migrationCommandTimeout?: Duration;
  /** How long the good path waits for the source's final snapshot. Default 10 minutes. */
  migrationWaitFinalSnapshot?: Duration;
  /** The seed agents' heartbeat interval: a source silent for three of them takes the bad path. Default 10 s. */
  seedHeartbeatInterval?: Duration;
  /** The seeds' ownership timings (they set the copy's fence bound); must be what the seeds' sidecars run. */
  ownershipTimings?: Partial<OwnershipTimings>;
  /** How long a migration's copy waits for the source's final snapshot. Default 10 minutes. */
  copyWaitForFinal?: Duration;
  /**
   * What URLs reported by seeds the garden may fetch besides https on public addresses: any of `http`,
   * `loopback`, `private` (docs/design.md section 12). Default none; the local landscape and tests allow
   * `http` and `loopback`. Link-local addresses (instance metadata) are never allowed.
   */
  outboundAllow?: readonly ('http' | 'loopback' | 'private')[];
  /** Role name prefix of seed agents (`<prefix><seed>`). Default `gl-seed-`. */
  agentRolePrefix?: string;
  /** The Metrics Insights alarm over all seed dead-letter queues. Default on; the local emulator cannot create it. */
  seedDeadLetterAlarm?: boolean;
}

/** The garden: state, owner records zone, event bus and the HTTP API. */
export class GardenStack extends Stack {
  constructor(scope: Construct, id: string, props: GardenStackProps) {
    super(scope, id, props);
    const logRetention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;

    const table = new dynamodb.TableV2(this, 'GardenTable', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      billing: dynamodb.Billing.onDemand(),
      encryption: dynamodb.TableEncryptionV2.awsManagedKey(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: false,
      removalPolicy: RemovalPolicy.RETAIN,
      globalSecondaryIndexes: Object.values(TABLE_INDEXES).map((index) => ({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
        sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
      })),
    });

    const accessLogs = new s3.Bucket(this, 'AccessLogs', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledge(accessLogs, 'S1', 'This is the server access log bucket itself; logging it into itself would loop.');

    // ShootState blobs larger than a DynamoDB item can hold (docs/design.md: > 100 KB) live here.
    const stateBucket = new s3.Bucket(this, 'StateBucket', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: true,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'state/',
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const zone = new route53.PublicHostedZone(this, 'InternalZone', {
      zoneName: props.internalDomain,
      comment: 'gardenless owner records (GEP-17): owner.<shoot>.<project>.<domain> TXT = owning seed identity',
    });

    const apiDomain: ApiDomain = {
      zone: new route53.PublicHostedZone(this, 'ExternalZone', {
        zoneName: props.externalDomain ?? 'shoots.gardenless.local',
        comment:
          'gardenless API records: api.<shoot>.<project>.<domain> A/AAAA/CNAME = the load balancer of the seed serving the control plane',
      }),
      externalDomain: props.externalDomain ?? 'shoots.gardenless.local',
      ttl: props.apiRecordTtl ?? Duration.seconds(60),
    };

    // Wraps the data keys of shoots' secrets (docs/design.md section 14): the garden seals and reseals, each
    // seed agent unwraps only what was wrapped under its own seed's name (cdk/actors.ts).
    const shootSecretsKey = new kms.Key(this, 'ShootSecretsKey', {
      description: "gardenless: wraps the data keys of shoots' secrets (cluster CA, client CA, ServiceAccount key)",
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    new CfnOutput(this, 'ShootSecretsKeyArn', { value: shootSecretsKey.keyArn });

    const bus = new events.EventBus(this, 'Bus', { description: 'gardenless events (source "gardenless")' });

    const seedQueuePrefix = props.seedQueuePrefix ?? 'gl-seed-';
    const seedQueueArns = Stack.of(this).formatArn({ service: 'sqs', resource: `${seedQueuePrefix}*` });
    new CfnOutput(this, 'SeedQueuePrefix', { value: seedQueuePrefix });

    const api = new GardenFunction(this, 'Api', {
      entry: 'functions/api/handler.ts',
      description: 'the gardenless garden API',
      logRetention,
      // Just under API Gateway's 30-second integration limit, so a slow cold start still answers.
      timeout: Duration.seconds(29),
      environment: {
        TABLE_NAME: table.tableName,
        EVENT_BUS_NAME: bus.eventBusName,
        HOSTED_ZONE_ID: zone.hostedZoneId,
        INTERNAL_DOMAIN: props.internalDomain,
        // A heartbeat that does not say how long it holds holds three of the deployment's intervals.
        SEED_LEASE_DURATION_SECONDS: String(3 * (props.seedHeartbeatInterval ?? Duration.seconds(10)).toSeconds()),
        // The fence bound a migration dry run reports is the deployment's.
        ...(props.ownershipTimings ? { OWNERSHIP_TIMINGS: JSON.stringify(props.ownershipTimings) } : {}),
      },
    });
    table.grantReadWriteData(api.function);
    acknowledgeTableIndexes(api.role, table);
    // The kubeconfig subresources sign client certificates with the shoot's client CA.
    grantShootSecrets(api, shootSecretsKey);
    if (props.kubeconfigProxyUrl) api.function.addEnvironment('KUBECONFIG_PROXY_URL', props.kubeconfigProxyUrl);
    const outboundAllow = (props.outboundAllow ?? []).join(',');
    const agentRolePrefix = props.agentRolePrefix ?? DEFAULT_AGENT_ROLE_PREFIX;
    api.function.addEnvironment('OUTBOUND_ALLOW', outboundAllow);
    api.function.addEnvironment('AGENT_ROLE_PREFIX', agentRolePrefix);
    api.function.addEnvironment('VIEWER_ROLE_NAMES', `${this.stackName}-viewer`);
    bus.grantPutEventsTo(api.function);
    // Seeds are registered at run time, so their command queues are too: the API may manage queues under
    // the garden's own prefix only.
    api.function.addEnvironment('SEED_QUEUE_PREFIX', seedQueuePrefix);
    api.role.addToPolicy(
      new iam.PolicyStatement({
        actions: [
          'sqs:CreateQueue',
          'sqs:GetQueueUrl',
          'sqs:GetQueueAttributes',
          'sqs:SetQueueAttributes',
          'sqs:TagQueue',
          'sqs:DeleteQueue',
        ],
        resources: [seedQueueArns],
      }),
    );
    acknowledge(
      api.role,
      `IAM5[Resource::${nagArn(this, 'sqs', `${seedQueuePrefix}*`)}]`,
      "Seed command queues are created when seeds register; the wildcard is confined to queue names under this garden's prefix.",
    );

    const apiAccessLogs = new logs.LogGroup(this, 'ApiAccessLogs', {
      retention: logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const httpApi = new HttpApi(this, 'HttpApi', {
      description: 'gardenless garden API (v1)',
      createDefaultStage: false,
      defaultAuthorizer: new HttpIamAuthorizer(),
    });
    new HttpStage(this, 'DefaultStage', {
      httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: 200, burstLimit: 400 },
      accessLogSettings: {
        destination: new LogGroupLogDestination(apiAccessLogs),
        format: AccessLogFormat.jsonWithStandardFields(),
      },
    });
    const integration = new HttpLambdaIntegration('ApiIntegration', api.function);
    const route = (path: string, authorizer?: IHttpRouteAuthorizer) =>
      httpApi.addRoutes({ path, methods: [HttpMethod.ANY], integration, ...(authorizer ? { authorizer } : {}) });
    route('/{proxy+}');
    // Health is public so that load balancers and uptime checks need no credentials; it reveals only a version.
    const health = route('/healthz', new HttpNoneAuthorizer());
    for (const r of health)
      acknowledge(
        r,
        'APIG4',
        'Health is deliberately public for load balancers and uptime checks; it returns only status and version.',
      );

    new CfnOutput(this, 'ApiFunctionName', { value: api.function.functionName });
    new CfnOutput(this, 'ApiId', { value: httpApi.apiId });
    new CfnOutput(this, 'ApiUrl', { value: httpApi.apiEndpoint });
    new CfnOutput(this, 'TableName', { value: table.tableName });
    new CfnOutput(this, 'StateBucketName', { value: stateBucket.bucketName });
    new CfnOutput(this, 'HostedZoneId', { value: zone.hostedZoneId });
    new CfnOutput(this, 'InternalDomain', { value: props.internalDomain });
    new CfnOutput(this, 'ApiHostedZoneId', { value: apiDomain.zone.hostedZoneId });
    new CfnOutput(this, 'ExternalDomain', { value: apiDomain.externalDomain });
    new CfnOutput(this, 'EventBusName', { value: bus.eventBusName });

    const snapshotCopy = new SnapshotCopy(this, 'SnapshotCopy', {
      logRetention,
      backupBucketPrefix: props.backupBucketPrefix,
      stateMachineName: `${this.stackName}-copy-snapshots`,
    });
    const ownership = new OwnershipAudit(this, 'Ownership', {
      logRetention,
      table,
      zone,
      bus,
      internalDomain: props.internalDomain,
      apiDomain,
      auditInterval: props.auditInterval,
      scheduleEnabled: props.auditSchedule ?? true,
    });
    const lifecycle = new ShootLifecycle(this, 'ShootLifecycle', {
      name: `${this.stackName}-operate-shoot`,
      logRetention,
      table,
      bus,
      zone,
      internalDomain: props.internalDomain,
      apiDomain,
      seedQueuePrefix,
      shootSecretsKey,
      ...(props.operationCommandTimeout ? { commandTimeout: props.operationCommandTimeout } : {}),
      scheduleEnabled: props.lifecycleSchedule ?? true,
    });
    new CfnOutput(this, 'LifecycleFunctionName', { value: lifecycle.controller.function.functionName });
    new CfnOutput(this, 'OperateShootStateMachineArn', { value: lifecycle.stateMachine.stateMachineArn });
    const watchdog = new DependencyWatchdog(this, 'DependencyWatchdog', {
      logRetention,
      table,
      bus,
      seedQueuePrefix,
      scheduleEnabled: props.watchdogSchedule ?? true,
      outboundAllow,
      externalDomain: apiDomain.externalDomain,
      ...(props.watchdogProbesApiDomain ? { probeViaApiDomain: { externalDomain: apiDomain.externalDomain } } : {}),
    });
    new CfnOutput(this, 'WatchdogFunctionName', { value: watchdog.function.function.functionName });
    new CfnOutput(this, 'WatchdogPartitionFunctionName', {
      value: watchdog.partitionFunction.function.functionName,
    });
    const migrateShootName = `${this.stackName}-migrate-shoot`;
    const migration = new Migration(this, 'Migration', {
      name: migrateShootName,
      logRetention,
      table,
      bus,
      zone,
      stateBucket,
      internalDomain: props.internalDomain,
      apiDomain,
      seedQueuePrefix,
      backupBucketPrefix: props.backupBucketPrefix ?? 'gl-backup-',
      copySnapshots: snapshotCopy.stateMachine,
      copySnapshotsName: `${this.stackName}-copy-snapshots`,
      shootSecretsKey,
      ...(props.migrationCommandTimeout ? { commandTimeout: props.migrationCommandTimeout } : {}),
      ...(props.migrationWaitFinalSnapshot ? { waitFinalSnapshot: props.migrationWaitFinalSnapshot } : {}),
      ...(props.seedHeartbeatInterval ? { heartbeatInterval: props.seedHeartbeatInterval } : {}),
      ...(props.ownershipTimings ? { ownershipTimings: props.ownershipTimings } : {}),
      ...(props.copyWaitForFinal ? { copyWaitForFinal: props.copyWaitForFinal } : {}),
    });
    const leaseMonitor = new LeaseMonitor(this, 'LeaseMonitor', {
      logRetention,
      table,
      bus,
      migration: migration.stateMachine,
      scheduleEnabled: props.leaseMonitorSchedule ?? true,
    });
    new CfnOutput(this, 'LeaseMonitorFunctionName', { value: leaseMonitor.function.function.functionName });
    const evacuation = new Evacuation(this, 'Evacuation', {
      logRetention,
      table,
      bus,
      migration: migration.stateMachine,
      migrationName: migrateShootName,
      ...props.evacuation,
      scheduleEnabled: props.evacuation?.scheduleEnabled ?? true,
    });
    new CfnOutput(this, 'EvacuationFunctionName', { value: evacuation.function.function.functionName });
    // POST .../migrate admits, locks and starts the state machine.
    migration.stateMachine.grantStartExecution(api.function);
    // ...and looks at an execution whose migration still says Running, to resume one that died unrecorded.
    api.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['states:DescribeExecution'],
        resources: [
          this.formatArn({
            service: 'states',
            resource: 'execution',
            resourceName: `${migrateShootName}:*`,
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ],
      }),
    );
    acknowledge(
      api.role,
      `IAM5[Resource::${nagArn(this, 'states', `execution:${migrateShootName}:*`)}]`,
      'Executions are named <migrationId>-<attempt> at run time; the API only describes executions of migrate-shoot.',
    );
    api.function.addEnvironment('MIGRATE_SHOOT_STATE_MACHINE_ARN', migration.stateMachine.stateMachineArn);
    new CfnOutput(this, 'MigrateShootStateMachineArn', { value: migration.stateMachine.stateMachineArn });
    new CfnOutput(this, 'CopySnapshotsStateMachineArn', { value: snapshotCopy.stateMachine.stateMachineArn });
    new CfnOutput(this, 'OwnershipAuditFunctionName', { value: ownership.auditFunction.function.functionName });
    new CfnOutput(this, 'OwnershipCheckFunctionName', { value: ownership.checkFunction.function.functionName });

    new Operations(this, 'Operations', {
      logRetention,
      bus,
      apiId: httpApi.apiId,
      functions: {
        Api: api.function,
        Lifecycle: lifecycle.controller.function,
        Operate: lifecycle.operate.function,
        Watchdog: watchdog.function.function,
        LeaseMonitor: leaseMonitor.function.function,
        Evacuation: evacuation.function.function,
        OwnershipAudit: ownership.auditFunction.function,
        OwnershipCheck: ownership.checkFunction.function,
        ...Object.fromEntries(Object.entries(migration.functions).map(([k, f]) => [`Migration${k}`, f.function])),
        ...Object.fromEntries(Object.entries(snapshotCopy.functions).map(([k, f]) => [`Copy${k}`, f.function])),
      },
      ...(props.seedDeadLetterAlarm === undefined ? {} : { seedDeadLetterAlarm: props.seedDeadLetterAlarm }),
      deadLetterQueues: {
        Lifecycle: lifecycle.deadLetterQueue,
        Watchdog: watchdog.deadLetterQueue,
        LeaseMonitor: leaseMonitor.deadLetterQueue,
        Evacuation: evacuation.deadLetterQueue,
        OwnershipAudit: ownership.deadLetterQueue,
      },
    });

    new Actors(this, 'Actors', {
      api: httpApi,
      agentRolePrefix,
      seedQueuePrefix,
      backupBucketPrefix: props.backupBucketPrefix ?? 'gl-backup-',
      zone,
      migration: migration.stateMachine,
      operations: lifecycle.stateMachine,
      shootSecretsKey,
    });
  }
}
