import { App, Duration, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { GardenStack } from './garden-stack.js';
import { parseOwnershipTimings } from '../core/ownership/index.js';

const app = new App();
const internalDomain = (app.node.tryGetContext('internalDomain') as string | undefined) ?? 'internal.gardenless.local';
new GardenStack(app, (app.node.tryGetContext('stackName') as string | undefined) ?? 'Garden', {
  internalDomain,
  ...(app.node.tryGetContext('externalDomain')
    ? { externalDomain: String(app.node.tryGetContext('externalDomain')) }
    : {}),
  ...seconds('apiRecordTtl', app.node.tryGetContext('apiRecordTtlSeconds') as string | undefined),
  ...(app.node.tryGetContext('kubeconfigProxyUrl')
    ? { kubeconfigProxyUrl: String(app.node.tryGetContext('kubeconfigProxyUrl')) }
    : {}),
  ...(app.node.tryGetContext('watchdogProbesApiDomain') === 'true' ? { watchdogProbesApiDomain: true } : {}),
  watchdogSchedule: app.node.tryGetContext('watchdogSchedule') !== 'false',
  leaseMonitorSchedule: app.node.tryGetContext('leaseMonitorSchedule') !== 'false',
  auditSchedule: app.node.tryGetContext('auditSchedule') !== 'false',
  lifecycleSchedule: app.node.tryGetContext('lifecycleSchedule') !== 'false',
  evacuation: {
    scheduleEnabled: app.node.tryGetContext('evacuationSchedule') !== 'false',
    ...numbers({
      maxSeeds: 'evacuationMaxSeeds',
      maxLostShare: 'evacuationMaxLostShare',
      maxAttempts: 'evacuationMaxAttempts',
    }),
  },
  ...seconds('migrationCommandTimeout', app.node.tryGetContext('migrationCommandTimeoutSeconds') as string | undefined),
  ...seconds(
    'migrationWaitFinalSnapshot',
    app.node.tryGetContext('migrationWaitFinalSnapshotSeconds') as string | undefined,
  ),
  ...seconds('seedHeartbeatInterval', app.node.tryGetContext('seedHeartbeatIntervalSeconds') as string | undefined),
  ...seconds('copyWaitForFinal', app.node.tryGetContext('copyWaitForFinalSeconds') as string | undefined),
  ownershipTimings: parseOwnershipTimings(app.node.tryGetContext('ownershipTimings') as string | undefined),
  ...(app.node.tryGetContext('outboundAllow')
    ? {
        outboundAllow: String(app.node.tryGetContext('outboundAllow')).split(',').filter(Boolean) as (
          'http' | 'loopback' | 'private'
        )[],
      }
    : {}),
  ...(app.node.tryGetContext('seedDeadLetterAlarm') === 'false' ? { seedDeadLetterAlarm: false } : {}),
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
// Every synth and deploy runs the AwsSolutions pack; a finding fails synthesis unless acknowledged with a reason.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true, writeSuppressionsToCloudFormation: true }));

/** A duration from a context value in seconds (tests shorten the migration's waits). */
function seconds<K extends string>(key: K, value: string | undefined): Partial<Record<K, Duration>> {
  return value === undefined ? {} : ({ [key]: Duration.seconds(Number(value)) } as Partial<Record<K, Duration>>);
}

/** Numbers from context values (the evacuation rails); absent ones keep the defaults. */
function numbers<K extends string>(keys: Record<K, string>): Partial<Record<K, number>> {
  const out: Partial<Record<K, number>> = {};
  for (const [key, name] of Object.entries(keys) as [K, string][]) {
    const value = app.node.tryGetContext(name) as string | undefined;
    if (value !== undefined) out[key] = Number(value);
  }
  return out;
}
