import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { Route53Client } from '@aws-sdk/client-route-53';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SQSClient } from '@aws-sdk/client-sqs';
import { TABLE_INDEXES } from '../../adapters/dynamodb/keys.js';
import { ROUTE53_RETRY } from '../../adapters/route53/route53-api.js';
import { CallMeter, type CallReport } from '../../adapters/metering/call-meter.js';
import { logger } from './logger.js';

/**
 * The periodic jobs' AWS clients, each counted by one meter: a round returns what it asked of AWS
 * (`CallReport`) and logs it, so that a round's cost is visible on AWS and the fleet benchmark can
 * price it. An execution environment runs one invocation at a time, so one meter per module is one per
 * invocation once each round `take`s it.
 */
export const meter = new CallMeter({ dynamodbIndexes: Object.values(TABLE_INDEXES) });

export const meteredClients = {
  dynamodb: () => meter.attach(new DynamoDBClient({}), 'DynamoDB'),
  route53: () => meter.attach(new Route53Client({ ...ROUTE53_RETRY }), 'Route53'),
  sqs: () => meter.attach(new SQSClient({}), 'SQS'),
  sfn: () => meter.attach(new SFNClient({}), 'StepFunctions'),
  events: () => meter.attach(new EventBridgeClient({}), 'EventBridge'),
  lambda: () => meter.attach(new LambdaClient({}), 'Lambda'),
};

/** Forgets what an earlier invocation that failed before `takeCalls` left in the meter. */
export function startMetering(): void {
  meter.take();
}

/** The calls since `startMetering` (or the last `takeCalls`), logged under `what`. */
export function takeCalls(what: string): CallReport {
  const calls = meter.take();
  logger.info(`${what}: AWS calls`, { calls });
  return calls;
}
