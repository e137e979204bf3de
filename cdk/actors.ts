import { ArnFormat, CfnOutput, Stack, Tags, Token, type CfnResource } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as route53 from 'aws-cdk-lib/aws-route53';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { SEED_PRINCIPAL_TAG } from '../functions/api/access.js';
import { routes as defaultRoutes, type Route } from '../functions/api/routes.js';
import { acknowledge } from './nag.js';

export interface ActorsProps {
  api: HttpApi;
  /** Role name prefix of seed agents: the agent of seed X runs as role `<prefix>X`, tagged `gardenless-seed=X`. */
  agentRolePrefix: string;
  seedQueuePrefix: string;
  backupBucketPrefix: string;
  zone: route53.IHostedZone;
  /** The state machine whose task tokens agents answer. */
  migration: sfn.IStateMachine;
  /** operate-shoot: agents answer its lifecycle commands too. */
  operations: sfn.IStateMachine;
  /** Wraps the data keys of shoots' secrets; an agent unwraps only those wrapped under its own seed's name. */
  shootSecretsKey: kms.IKey;
  routes?: readonly Route[];
}

/** The policy variable that names the calling agent's seed in resource ARNs. */
export const SEED_TAG_VARIABLE = `\${aws:PrincipalTag/${SEED_PRINCIPAL_TAG}}`;

/**
 * The actors of docs/design.md section 12 as IAM: an operator role (every route), a viewer role (the routes the
 * route table marks `viewer`) and the seed agent managed policy, which every seed's agent role carries.
 * The API routes each actor may invoke come from the route table (`access`), the same entries the
 * handler checks; a new agent route (the seed lease) is one entry there.
 *
 * Per-seed rights without per-seed policies: the agent role of seed X is named `<prefix>X` and tagged
 * `gardenless-seed=X`; the policy names resources with `${aws:PrincipalTag/gardenless-seed}`, so one
 * policy gives each agent its own seed's routes, queue and bucket and nothing of another seed's.
 */
export class Actors extends Construct {
  readonly operatorRole: iam.Role;
  readonly viewerRole: iam.Role;
  readonly agentPolicy: iam.ManagedPolicy;

  constructor(scope: Construct, id: string, props: ActorsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const table = props.routes ?? defaultRoutes;
    const invoke = (method: string, path: string) =>
      stack.formatArn({
        service: 'execute-api',
        resource: props.api.apiId,
        resourceName: `*/${method}${path}`,
        arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
      });
    // How cdk-nag spells these ARNs in its findings (each wildcard is acknowledged with its reason below).
    const apiId = `<${stack.getLogicalId(props.api.node.defaultChild as CfnResource)}>`;
    const part = (value: string, pseudo: string) => (Token.isUnresolved(value) ? `<AWS::${pseudo}>` : value);
    const shown = (resource: string) =>
      resource.replaceAll(SEED_TAG_VARIABLE, `<aws:PrincipalTag/${SEED_PRINCIPAL_TAG}>`);
    const nagInvoke = (method: string, path: string) =>
      shown(
        `arn:${part(stack.partition, 'Partition')}:execute-api:${part(stack.region, 'Region')}:${part(stack.account, 'AccountId')}:${apiId}/*/${method}${path}`,
      );
    const pathPattern = (route: Route, ownSeed: boolean) =>
      route.path.replace(/\{([a-zA-Z]+)\}/g, (_m, name: string) =>
        ownSeed && name === 'name' ? SEED_TAG_VARIABLE : '*',
      );

    this.operatorRole = new iam.Role(this, 'Operator', {
      roleName: `${stack.stackName}-operator`,
      assumedBy: new iam.AccountRootPrincipal(),
      description: 'gardenless operator: every route of the garden API',
    });
    this.operatorRole.addToPolicy(
      new iam.PolicyStatement({ actions: ['execute-api:Invoke'], resources: [invoke('*', '/*')] }),
    );
    acknowledge(
      this.operatorRole,
      `IAM5[Resource::${nagInvoke('*', '/*')}]`,
      'The operator may call every route of this one API, in any stage (docs/design.md section 12).',
    );

    this.viewerRole = new iam.Role(this, 'Viewer', {
      roleName: `${stack.stackName}-viewer`,
      assumedBy: new iam.AccountRootPrincipal(),
      description: 'gardenless viewer: the read routes of the garden API',
    });
    const reads = table.filter((r) => r.access?.viewer);
    this.viewerRole.addToPolicy(
      new iam.PolicyStatement({
        actions: ['execute-api:Invoke'],
        resources: reads.map((r) => invoke(r.method, pathPattern(r, false))),
      }),
    );
    for (const r of reads) {
      acknowledge(
        this.viewerRole,
        `IAM5[Resource::${nagInvoke(r.method, pathPattern(r, false))}]`,
        'A read route of this API: "*" stands for the stage and for resource names, which the route table marks readable by viewers.',
      );
    }

    const agentRoutes = table.filter((r) => r.access?.agent);
    const queueArn = stack.formatArn({ service: 'sqs', resource: `${props.seedQueuePrefix}${SEED_TAG_VARIABLE}.fifo` });
    const bucketArn = `arn:${stack.partition}:s3:::${props.backupBucketPrefix}${SEED_TAG_VARIABLE}`;
    this.agentPolicy = new iam.ManagedPolicy(this, 'SeedAgent', {
      managedPolicyName: `${stack.stackName}-seed-agent`,
      description: `gardenless seed agent: its own seed (role ${props.agentRolePrefix}<seed>, tag ${SEED_PRINCIPAL_TAG}=<seed>)`,
      statements: [
        new iam.PolicyStatement({
          sid: 'OwnSeedRoutes',
          actions: ['execute-api:Invoke'],
          resources: agentRoutes.map((r) => invoke(r.method, pathPattern(r, r.access?.agent === 'own-seed'))),
        }),
        new iam.PolicyStatement({
          sid: 'OwnCommandQueue',
          actions: [
            'sqs:ReceiveMessage',
            'sqs:DeleteMessage',
            'sqs:ChangeMessageVisibility',
            'sqs:GetQueueAttributes',
            'sqs:GetQueueUrl',
          ],
          resources: [queueArn],
        }),
        new iam.PolicyStatement({
          sid: 'OwnBackupBucket',
          actions: ['s3:ListBucket', 's3:GetBucketLocation'],
          resources: [bucketArn],
        }),
        new iam.PolicyStatement({
          sid: 'OwnBackupObjects',
          actions: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload'],
          resources: [`${bucketArn}/*`],
        }),
        new iam.PolicyStatement({
          sid: 'TaskAnswers',
          actions: ['states:SendTaskSuccess', 'states:SendTaskFailure', 'states:SendTaskHeartbeat'],
          resources: [props.migration.stateMachineArn, props.operations.stateMachineArn],
        }),
        // Sidecars read owner records (API mode and the audit's view); only the orchestrator writes them.
        // The shoots' secrets in a command were sealed for one seed (encryption context gardenless:seed): an
        // agent opens the copies sealed for its own seed and no other, whatever it finds on a queue.
        new iam.PolicyStatement({
          sid: 'OwnShootSecrets',
          actions: ['kms:Decrypt'],
          resources: [props.shootSecretsKey.keyArn],
          conditions: { StringEquals: { 'kms:EncryptionContext:gardenless:seed': SEED_TAG_VARIABLE } },
        }),
        new iam.PolicyStatement({
          sid: 'OwnerRecordsReadOnly',
          actions: ['route53:ListResourceRecordSets', 'route53:GetHostedZone'],
          resources: [props.zone.hostedZoneArn],
        }),
      ],
    });
    for (const r of agentRoutes) {
      acknowledge(
        this.agentPolicy,
        `IAM5[Resource::${nagInvoke(r.method, pathPattern(r, r.access?.agent === 'own-seed'))}]`,
        'The seed is the caller\'s own (principal tag); "*" stands for the stage and for shoot names, and the handler checks that a shoot is placed on the caller\'s seed.',
      );
    }
    acknowledge(
      this.agentPolicy,
      `IAM5[Resource::${shown(`arn:${part(stack.partition, 'Partition')}:s3:::${props.backupBucketPrefix}${SEED_TAG_VARIABLE}/*`)}]`,
      "The objects of the caller's own backup bucket (named by its seed tag): snapshots are written and read by key at run time.",
    );

    new CfnOutput(scope, 'OperatorRoleArn', { value: this.operatorRole.roleArn });
    new CfnOutput(scope, 'ViewerRoleArn', { value: this.viewerRole.roleArn });
    new CfnOutput(scope, 'SeedAgentPolicyArn', { value: this.agentPolicy.managedPolicyArn });
    new CfnOutput(scope, 'SeedAgentRolePrefix', { value: props.agentRolePrefix });
  }
}

/**
 * The agent role of one seed, named and tagged as the policy and the handler expect. Trust is given by
 * the caller: EKS Pod Identity (`pods.eks.amazonaws.com`), an IRSA OIDC principal, or another principal.
 */
export class SeedAgentRole extends Construct {
  readonly role: iam.Role;

  constructor(
    scope: Construct,
    id: string,
    props: { seedName: string; agentRolePrefix: string; policy: iam.IManagedPolicy; assumedBy: iam.IPrincipal },
  ) {
    super(scope, id);
    const roleName = `${props.agentRolePrefix}${props.seedName}`;
    if (roleName.length > 64)
      throw new Error(`agent role name ${roleName} exceeds IAM's 64 characters; use a shorter prefix or seed name`);
    this.role = new iam.Role(this, 'Role', {
      roleName,
      assumedBy: props.assumedBy,
      managedPolicies: [props.policy],
      description: `gardenless seed agent of seed ${props.seedName}`,
    });
    Tags.of(this.role).add(SEED_PRINCIPAL_TAG, props.seedName);
  }
}
