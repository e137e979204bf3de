import { Stack, Token, Validations, type CfnResource } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';

/** Acknowledges one cdk-nag AwsSolutions finding on a construct, with the reason operators will read. */
export function acknowledge(scope: IConstruct, rule: string, reason: string): void {
  Validations.of(scope).acknowledge({ id: `AwsSolutions::AwsSolutions-${rule}`, reason });
}

/**
 * `grantReadWriteData` on a table also grants its indexes as `<table arn>/index/*`: the wildcard
 * covers only this table's own indexes.
 */
export function acknowledgeTableIndexes(scope: IConstruct, table: ITableV2): void {
  const cfn = table.node.defaultChild as CfnResource;
  const logicalId = Stack.of(table).getLogicalId(cfn);
  acknowledge(
    scope,
    `IAM5[Resource::<${logicalId}.Arn>/index/*]`,
    "The wildcard is confined to this table's own global secondary indexes, which queries need.",
  );
}

/**
 * An ARN of this stack's account and region as cdk-nag prints it in a finding: each part literal when
 * known at synth time, else the pseudo parameter in angle brackets.
 */
export function nagArn(scope: IConstruct, service: string, resource: string): string {
  const stack = Stack.of(scope);
  const part = (value: string, pseudo: string) => (Token.isUnresolved(value) ? `<AWS::${pseudo}>` : value);
  return `arn:${part(stack.partition, 'Partition')}:${service}:${part(stack.region, 'Region')}:${part(stack.account, 'AccountId')}:${resource}`;
}

/**
 * Lets a state machine invoke its task functions. `grantInvoke` also grants the functions' versions and
 * aliases (`<arn>:*`), one acknowledged wildcard per function.
 */
export function grantTaskFunctions(stateMachine: IGrantable & IConstruct, functions: readonly IFunction[]): void {
  for (const f of functions) {
    f.grantInvoke(stateMachine);
    const logicalId = Stack.of(f).getLogicalId(f.node.defaultChild as CfnResource);
    acknowledge(
      stateMachine,
      `IAM5[Resource::<${logicalId}.Arn>:*]`,
      'grantInvoke covers the versions and aliases of this one task function.',
    );
  }
  acknowledgeLogsAndTracing(stateMachine);
}

/** A logged and traced state machine's role: the log delivery and X-Ray APIs take no resource. */
export function acknowledgeLogsAndTracing(stateMachine: IConstruct): void {
  acknowledge(
    stateMachine,
    'IAM5[Resource::*]',
    'CloudWatch Logs delivery and X-Ray tracing APIs take no resource; AWS documents "*" for them.',
  );
}
