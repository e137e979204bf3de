import { Duration, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { join, resolve } from 'node:path';
import { GardenFunction } from './garden-function.js';
import { acknowledge, grantTaskFunctions } from './nag.js';

const ROOT = resolve(import.meta.dirname, '..');

export interface SnapshotCopyProps {
  logRetention: logs.RetentionDays;
  /**
   * Seed backup buckets are registered with seeds at run time, so the copy functions are scoped to a
   * bucket name prefix instead of named buckets. Default `gl-backup-`.
   */
  backupBucketPrefix?: string;
  /** Objects above this size are copied with UploadPartCopy. Default 64 MiB. */
  multipartThresholdBytes?: number;
  /** A fixed name, so that a parent workflow's permissions on its executions can name them. */
  stateMachineName?: string;
}

type Access = 'list' | 'read' | 'write';

/**
 * The copy-snapshots state machine (`state-machines/copy-snapshots.asl.json`, loaded as it is, with the
 * functions' ARNs substituted) and its task functions, each with only the S3 actions it calls.
 */
export class SnapshotCopy extends Construct {
  readonly stateMachine: sfn.StateMachine;
  readonly functions: Readonly<
    Record<'validate' | 'findFinal' | 'plan' | 'copyBatch' | 'verify' | 'summarise', GardenFunction>
  >;

  constructor(scope: Construct, id: string, props: SnapshotCopyProps) {
    super(scope, id);
    const prefix = props.backupBucketPrefix ?? 'gl-backup-';
    const partition = Stack.of(this).partition;
    const bucketArn = `arn:${partition}:s3:::${prefix}*`;
    // Snapshot keys are `<technicalID>/v2/<name>` and technical IDs `shoot--<project>--<name>`.
    const objectArn = `${bucketArn}/shoot--*/v2/*`;
    // How cdk-nag spells these ARNs in its findings.
    const shownPartition = Token.isUnresolved(partition) ? '<AWS::Partition>' : partition;

    const fn = (
      name: string,
      entry: string,
      description: string,
      access: Access[],
      extra: { timeout?: Duration; memorySize?: number } = {},
    ) => {
      const f = new GardenFunction(this, name, {
        entry: `functions/copy-snapshots/${entry}`,
        description,
        logRetention: props.logRetention,
        ...extra,
        environment:
          props.multipartThresholdBytes === undefined
            ? {}
            : { MULTIPART_THRESHOLD_BYTES: String(props.multipartThresholdBytes) },
      });
      const statements: iam.PolicyStatement[] = [];
      // ListBucket also makes HeadObject of a missing key a 404 instead of a 403.
      if (access.includes('list'))
        statements.push(new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucketArn] }));
      if (access.includes('read'))
        statements.push(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [objectArn] }));
      if (access.includes('write'))
        statements.push(
          new iam.PolicyStatement({ actions: ['s3:PutObject', 's3:AbortMultipartUpload'], resources: [objectArn] }),
        );
      for (const s of statements) f.role.addToPolicy(s);
      if (access.length > 0) {
        const reason = `Seed backup buckets are registered at run time; access is limited to buckets named ${prefix}* and to snapshot keys shoot--*/v2/*.`;
        acknowledge(f.role, `IAM5[Resource::arn:${shownPartition}:s3:::${prefix}*]`, reason);
        acknowledge(f.role, `IAM5[Resource::arn:${shownPartition}:s3:::${prefix}*/shoot--*/v2/*]`, reason);
      }
      return f;
    };

    this.functions = {
      validate: fn('Validate', 'validate.ts', 'copy-snapshots: validate the request and both buckets', ['list']),
      findFinal: fn('FindFinal', 'find-final.ts', 'copy-snapshots: poll the source for the final snapshot', ['list']),
      plan: fn('Plan', 'plan.ts', 'copy-snapshots: plan the copy batches', ['list'], { timeout: Duration.seconds(60) }),
      copyBatch: fn(
        'CopyBatch',
        'copy-batch.ts',
        'copy-snapshots: copy one batch server-side and verify it',
        ['list', 'read', 'write'],
        {
          timeout: Duration.minutes(15),
        },
      ),
      verify: fn('Verify', 'verify.ts', 'copy-snapshots: verify the destination', ['list'], {
        timeout: Duration.seconds(60),
      }),
      summarise: fn('Summarise', 'summarise.ts', 'copy-snapshots: summarise and apply the fence bound', []),
    };

    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      stateMachineType: sfn.StateMachineType.STANDARD,
      ...(props.stateMachineName ? { stateMachineName: props.stateMachineName } : {}),
      definitionBody: sfn.DefinitionBody.fromFile(join(ROOT, 'state-machines', 'copy-snapshots.asl.json')),
      definitionSubstitutions: {
        ValidateFunctionArn: this.functions.validate.function.functionArn,
        FindFinalFunctionArn: this.functions.findFinal.function.functionArn,
        PlanFunctionArn: this.functions.plan.function.functionArn,
        CopyBatchFunctionArn: this.functions.copyBatch.function.functionArn,
        VerifyFunctionArn: this.functions.verify.function.functionArn,
        SummariseFunctionArn: this.functions.summarise.function.functionArn,
      },
      logs: { destination: logGroup, level: sfn.LogLevel.ALL, includeExecutionData: true },
      tracingEnabled: true,
    });
    grantTaskFunctions(
      this.stateMachine,
      Object.values(this.functions).map((f) => f.function),
    );
  }
}
