import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { join, resolve } from 'node:path';
import { METRICS_NAMESPACE } from '../functions/shared/metric-names.js';
import { acknowledge } from './nag.js';

const ROOT = resolve(import.meta.dirname, '..');

export interface GardenFunctionProps {
  /** Path of the handler module, relative to the repository root. */
  entry: string;
  description: string;
  environment?: Record<string, string>;
  timeout?: Duration;
  memorySize?: number;
  logRetention: logs.RetentionDays;
}

/**
 * A Lambda with its own role and log group: the role starts empty except for writing to that log
 * group, so every further permission is an explicit, resource-scoped grant by the caller.
 */
export class GardenFunction extends Construct {
  readonly function: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: GardenFunctionProps) {
    super(scope, id);
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Runs ${props.description}`,
    });
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );
    this.function = new NodejsFunction(this, 'Function', {
      entry: join(ROOT, props.entry),
      projectRoot: ROOT,
      depsLockFilePath: join(ROOT, 'package-lock.json'),
      description: props.description,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(15),
      role: this.role,
      logGroup: this.logGroup,
      tracing: lambda.Tracing.ACTIVE,
      environment: {
        POWERTOOLS_SERVICE_NAME: 'gardenless',
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        POWERTOOLS_LOG_LEVEL: 'INFO',
        ...props.environment,
      },
      bundling: {
        // The AWS SDK is bundled: the emulator's Node runtime does not provide it, and pinning it is safer anyway.
        externalModules: [],
        format: OutputFormat.CJS,
        target: 'node20',
        // No source maps: parsing megabytes of map on every cold start costs more than it saves; class names
        // are kept (below) so that logged errors stay readable.
        sourceMap: false,
        minify: true,
        // Error class names are the error types Step Functions' Retry and Catch match on: minification must keep them.
        keepNames: true,
      },
    });
    acknowledge(
      this.role,
      'IAM5[Resource::*]',
      'X-Ray tracing (PutTraceSegments, PutTelemetryRecords) takes no resource; AWS documents "*" for it.',
    );
  }
}
