/**
 * The bad case, on the local landscape (`npm start` first): a shoot's etcd holds data on its seed;
 * the migration takes the bad path (as if the source could not be reached from the garden), the owner
 * record moves, the source's sidecar fences itself and takes its final snapshot, the snapshots are
 * copied and restored on the destination. Then the evidence: the owner record before and after, the
 * snapshots copied, the keys present in the destination etcd, and the source's fenced leftover removed
 * by its own agent once its heartbeat learned that the garden placed the shoot elsewhere.
 *
 *   npm run demo            (DEMO_SHOOT=dev/web DEMO_KEYS=200)
 */
import { Route53Client } from '@aws-sdk/client-route-53';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { Etcd3 } from 'etcd3';
import { GardenClient } from '../adapters/http/garden-client.js';
import { Route53ApiRecords } from '../adapters/route53/api-records.js';
import { route53Api, Route53OwnerRecords } from '../adapters/route53/owner-records.js';
import { apiDomainName, describeTarget, type ApiRecord } from '../core/dns/index.js';
import { watchMigration } from '../cli/migrate-command.js';
import type { HostedControlPlane, Seed } from '../core/model/seed.js';
import type { Shoot } from '../core/model/shoot.js';
import { ownerRecordName } from '../core/ownership/record-name.js';
import { readEndpoints } from '../local/landscape-file.js';
import { emulatorCredentials } from '../local/aws-env.js';
import { untilWith } from '../harness/until.js';

const [project, name] = (process.env.DEMO_SHOOT ?? 'dev/web').split('/') as [string, string];
const KEYS = Number(process.env.DEMO_KEYS ?? 200);
const endpoints = readEndpoints();
if (!endpoints) {
  console.error('No local landscape: run `npm start` first.');
  process.exit(2);
}
const aws = { endpoint: endpoints.awsEndpoint, region: endpoints.region, credentials: emulatorCredentials() };
const api = new GardenClient({
  apiUrl: endpoints.apiUrl,
  region: endpoints.region,
  credentials: emulatorCredentials(),
});
const owners = new Route53OwnerRecords({
  hostedZoneId: endpoints.outputs.HostedZoneId,
  api: route53Api(new Route53Client(aws)),
});
const s3 = new S3Client({ ...aws, forcePathStyle: true });
const record = ownerRecordName({ shoot: name, project, internalDomain: endpoints.outputs.InternalDomain });
const apiRecords = endpoints.outputs.ApiHostedZoneId
  ? new Route53ApiRecords({ hostedZoneId: endpoints.outputs.ApiHostedZoneId, api: route53Api(new Route53Client(aws)) })
  : undefined;
const apiDomain = endpoints.outputs.ExternalDomain
  ? apiDomainName({ shoot: name, project, externalDomain: endpoints.outputs.ExternalDomain })
  : undefined;
const apiRecord = async (): Promise<ApiRecord | undefined> =>
  apiRecords && apiDomain ? apiRecords.get(apiDomain) : undefined;
const showApi = (r: ApiRecord | undefined) => (r ? `${describeTarget(r)} (TTL ${r.ttl} s)` : '(none)');

async function controlPlane(seedName: string, technicalID: string): Promise<HostedControlPlane | undefined> {
  const seed = await api.request<Seed>('GET', `/seeds/${seedName}`);
  return seed.body.status.controlPlanes?.find((c) => c.technicalID === technicalID);
}

const waitFor = untilWith({ timeoutMs: 120_000, intervalMs: 500 });

const shoot = (await api.request<Shoot>('GET', `/projects/${project}/shoots/${name}`)).body;
const source = shoot.status.seedName;
if (!source) throw new Error(`shoot ${project}/${name} is not scheduled`);
const id = shoot.status.technicalID;
console.log(`Shoot ${project}/${name} (${id}) runs on seed ${source}.`);

const sourceEtcd = await waitFor('the control plane to serve on the source', async () => {
  const cp = await controlPlane(source, id);
  return cp?.active && cp.etcdClientUrl ? cp.etcdClientUrl : undefined;
});
const etcd = new Etcd3({ hosts: sourceEtcd });
for (let i = 0; i < KEYS; i++)
  await etcd.put(`demo/key-${String(i).padStart(4, '0')}`).value(`written on ${source} at ${new Date().toISOString()}`);
etcd.close();
console.log(`Wrote ${KEYS} keys into the etcd on ${source} (${sourceEtcd}).`);
const before = await owners.get(record);
const apiBefore = await apiRecord();
console.log(`Owner record before: ${record} = ${before?.value ?? '(none)'}`);
console.log(`API record before:   ${apiDomain ?? '(no external domain)'} = ${showApi(apiBefore)}\n`);

console.log(
  'Migrating on the bad path: the garden does not talk to the source; ownership moves through the owner record.\n',
);
const started = await api.request<{ migrationId: string; destinationSeed: string; message?: string }>(
  'POST',
  `/projects/${project}/shoots/${name}/migrate`,
  { body: { mode: 'bad' } },
);
if (started.status !== 202) throw new Error(`migrate: ${started.status} ${JSON.stringify(started.body)}`);
const final = await watchMigration({
  client: api,
  project,
  name,
  migrationId: started.body.migrationId,
  output: 'table',
  intervalMs: 500,
});
if (final.state !== 'Succeeded') process.exit(1);

const destination = started.body.destinationSeed;
const after = await owners.get(record);
const apiAfter = await apiRecord();
const copied = await s3.send(new ListObjectsV2Command({ Bucket: `gl-backup-${destination}`, Prefix: `${id}/v2/` }));
const destinationEtcd = await waitFor('the restored control plane to serve on the destination', async () => {
  const cp = await controlPlane(destination, id);
  return cp?.active && cp.etcdClientUrl ? cp.etcdClientUrl : undefined;
});
const migrated = Date.now();
const leftoverGone = await waitFor(
  'the source to remove its fenced leftover',
  async () => ((await controlPlane(source, id)) === undefined ? { afterMs: Date.now() - migrated } : undefined),
  { timeoutMs: 60_000 },
).catch(() => undefined);
const restored = new Etcd3({ hosts: destinationEtcd });
const keys = await restored.getAll().prefix('demo/').keys();
restored.close();

console.log('\nEvidence');
console.log(`  owner record before:  ${before?.value ?? '(none)'}`);
console.log(`  owner record after:   ${after?.value ?? '(none)'}  (seed ${destination})`);
console.log(`  API record before:    ${apiDomain ?? ''} = ${showApi(apiBefore)}  (seed ${source})`);
console.log(
  `  API record after:     ${apiDomain ?? ''} = ${showApi(apiAfter)}  (seed ${destination}, switched once it served)`,
);
console.log(`  snapshots copied to gl-backup-${destination}:`);
for (const o of copied.Contents ?? []) console.log(`    ${o.Key}  ${o.Size} bytes`);
console.log(`  keys in the destination etcd (${destinationEtcd}): ${keys.length} of ${KEYS} written on ${source}`);
console.log(
  leftoverGone === undefined
    ? `  leftover on ${source}: still reported a minute after the migration (see the seed agent's log)`
    : `  leftover on ${source}: removed by its agent (etcd stopped, data removed, backups kept), ${(leftoverGone.afterMs / 1000).toFixed(1)} s after the migration`,
);
process.exit(keys.length === KEYS && leftoverGone !== undefined ? 0 : 1);
