import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { GardenStack } from './garden-stack.js';

const app = new App();
const internalDomain = (app.node.tryGetContext('internalDomain') as string | undefined) ?? 'internal.gardenless.local';
new GardenStack(app, (app.node.tryGetContext('stackName') as string | undefined) ?? 'Garden', {
  internalDomain,
  watchdogSchedule: app.node.tryGetContext('watchdogSchedule') !== 'false',
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
// Every synth and deploy runs the AwsSolutions pack; a finding fails synthesis unless acknowledged with a reason.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true, writeSuppressionsToCloudFormation: true }));
