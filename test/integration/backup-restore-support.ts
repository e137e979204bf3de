import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateHostedZoneCommand, Route53Client } from '@aws-sdk/client-route-53';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { Etcd3 } from 'etcd3';
import { inject } from 'vitest';
import { Route53OwnerLookup } from '../../adapters/route53/owner-lookup.js';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { s3Api } from '../../adapters/s3/s3-api.js';
import { S3SnapshotStore } from '../../adapters/s3/snapshot-store.js';
import { freeEtcdPorts } from '../../seed/ports.js';
import { startTcpProxy } from '../../harness/scenario/tcp-proxy.js';
import {
  BackupRestoreSidecar,
  EtcdSupervisor,
  restoreFromStore,
  sleep,
  type EtcdAddress,
  type SidecarOptions,
} from '../../seed/backup-restore/index.js';
import { emulatorCredentials } from '../../local/aws-env.js';
import { untilWith } from '../../harness/until.js';

/**
 * Shared pieces of the backup-restore integration tests: AWS clients on the emulator, a TCP proxy in
 * front of Route 53 that a test can cut, a writer that records what etcd acknowledged and refused, and
 * sidecars on free loopback ports in temporary directories, all stopped by `cleanup()`.
 */

const cleanups: (() => Promise<void> | void)[] = [];

/** Runs every registered cleanup, newest first, even when some fail. */
export async function cleanup(): Promise<void> {
  while (cleanups.length > 0) {
    try {
      await cleanups.pop()!();
    } catch (error) {
      console.error('backup-restore cleanup failed:', error);
    }
  }
}

export function unique(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

function aws() {
  const deployment = inject('deployment');
  return { endpoint: deployment.awsEndpoint, region: deployment.region, credentials: emulatorCredentials() };
}

export async function newBucket(label: string): Promise<S3SnapshotStore> {
  const s3 = new S3Client({ ...aws(), forcePathStyle: true });
  const bucket = unique(`gl-backup-br-${label}`);
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return new S3SnapshotStore({ bucket, api: s3Api(s3) });
}

/** A TCP proxy to the emulator; `cut()` resets every connection and refuses new ones until `heal()`. */
export interface CuttableProxy {
  readonly endpoint: string;
  cut(): void;
  heal(): void;
}

export async function emulatorProxy(): Promise<CuttableProxy> {
  const target = new URL(aws().endpoint);
  const proxy = await startTcpProxy({
    upstream: { host: target.hostname, port: Number(target.port) },
    label: 'route53',
  });
  cleanups.push(() => proxy.stop());
  return { endpoint: `http://127.0.0.1:${proxy.port}`, cut: () => proxy.cut(), heal: () => proxy.restore() };
}

export interface OwnerZone {
  readonly recordName: string;
  /** Written directly on the emulator (the orchestrator's side). */
  readonly records: Route53OwnerRecords;
  /** The sidecar's API-mode lookup, through the proxy when one is given. */
  lookupThrough(proxy?: CuttableProxy): Route53OwnerLookup;
}

export async function ownerZone(): Promise<OwnerZone> {
  const config = aws();
  const client = new Route53Client(config);
  const domain = `${unique('br')}.internal.gardenless.test`;
  const zone = await client.send(new CreateHostedZoneCommand({ Name: domain, CallerReference: unique('ref') }));
  const hostedZoneId = zone.HostedZone!.Id!;
  return {
    recordName: `owner.api1.dev.${domain}`,
    records: new Route53OwnerRecords({ hostedZoneId, api: route53Api(client) }),
    lookupThrough(proxy) {
      // One attempt: a cut connection is an answerless check at once, as a DNS timeout would be.
      const via = new Route53Client({ ...config, ...(proxy ? { endpoint: proxy.endpoint } : {}), maxAttempts: 1 });
      return new Route53OwnerLookup(new Route53OwnerRecords({ hostedZoneId, api: route53Api(via) }));
    },
  };
}

export function tempDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `gl-br-${label}-`));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export async function etcdPorts() {
  return freeEtcdPorts();
}

/** A single etcd in a new temp dir, started on `address`, and a client on it; the test closes and stops them. */
export async function startedEtcd(label: string, address: EtcdAddress) {
  const dir = tempDir(label);
  const supervisor = new EtcdSupervisor({
    dataDir: join(dir, 'data'),
    ...(await etcdPorts()),
    logFile: join(dir, 'etcd.log'),
  });
  await supervisor.ensure(address);
  const endpoint = supervisor.clientUrl(address);
  return { dir, supervisor, endpoint, client: new Etcd3({ hosts: endpoint }) };
}

export interface TestSidecar {
  readonly sidecar: BackupRestoreSidecar;
  readonly log: Record<string, unknown>[];
  readonly dir: string;
}

/** A sidecar on free ports in its own directory; stopped at cleanup. */
export async function startSidecar(
  options: Omit<SidecarOptions, 'etcd'> & { etcd?: Partial<SidecarOptions['etcd']> },
): Promise<TestSidecar> {
  const dir = tempDir('sidecar');
  const log: Record<string, unknown>[] = [];
  const sidecar = await BackupRestoreSidecar.start({
    ...options,
    etcd: { dataDir: join(dir, 'data'), ...(await etcdPorts()), logFile: join(dir, 'etcd.log'), ...options.etcd },
    log: (entry) => log.push({ at: Math.round(performance.now()), ...entry }),
  });
  cleanups.push(() => sidecar.stop());
  return { sidecar, log, dir };
}

/** `until` at these suites' pace: a sidecar answers within milliseconds, so it polls often and gives up sooner. */
export const until = untilWith({ timeoutMs: 20_000, intervalMs: 25 });

export async function readiness(statusUrl: string): Promise<number> {
  return (await fetch(`${statusUrl}/readyz`, { signal: AbortSignal.timeout(2_000) })).status;
}

export interface WriteRecord {
  readonly key: string;
  readonly value: string;
  /** performance.now() when the request was sent and when its answer (or failure) arrived. */
  readonly sentAt: number;
  readonly doneAt: number;
  /** The revision etcd acknowledged, or undefined when the write was refused. */
  readonly revision: number | undefined;
}

export interface Writer {
  readonly writes: readonly WriteRecord[];
  acknowledged(): WriteRecord[];
  refused(): WriteRecord[];
  stop(): Promise<void>;
}

/**
 * Writes unique keys one after the other through etcd's JSON gateway on the public client URL (as a
 * kube-apiserver would, but over HTTP/1.1 so that "acknowledged" is one plain response) and records
 * every outcome.
 */
export function startWriter(input: { clientUrl: string; prefix?: string; pauseMs?: number }): Writer {
  const writes: WriteRecord[] = [];
  let running = true;
  const prefix = input.prefix ?? unique('w');
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const key = `${prefix}/${String(i).padStart(6, '0')}`;
      const value = `v${i}`;
      const sentAt = performance.now();
      let revision: number | undefined;
      try {
        const res = await fetch(`${input.clientUrl}/v3/kv/put`, {
          method: 'POST',
          body: JSON.stringify({
            key: Buffer.from(key).toString('base64'),
            value: Buffer.from(value).toString('base64'),
          }),
          signal: AbortSignal.timeout(1_000),
        });
        const body = (await res.json()) as { header?: { revision?: string } };
        if (res.ok && body.header?.revision !== undefined) revision = Number(body.header.revision);
      } catch {
        // Refused, reset or timed out: not acknowledged.
      }
      writes.push({ key, value, sentAt, doneAt: performance.now(), revision });
      await sleep(revision === undefined ? 20 : (input.pauseMs ?? 5));
    }
  })();
  const writer: Writer = {
    writes,
    acknowledged: () => writes.filter((w) => w.revision !== undefined),
    refused: () => writes.filter((w) => w.revision === undefined),
    stop: async () => {
      running = false;
      await loop;
    },
  };
  cleanups.push(() => writer.stop());
  return writer;
}

/** Restores a store into a fresh etcd (its own dir and ports) and returns every key with its value and mod revision. */
export async function restoredContent(input: {
  store: S3SnapshotStore;
  technicalID: string;
  expectedLastRevision?: number;
}) {
  const dir = tempDir('verify');
  const supervisor = new EtcdSupervisor({
    dataDir: join(dir, 'data'),
    ...(await etcdPorts()),
    logFile: join(dir, 'etcd.log'),
  });
  cleanups.push(() => supervisor.stop());
  const result = await restoreFromStore({
    store: input.store,
    technicalID: input.technicalID,
    supervisor,
    stagingDir: join(dir, 'staging'),
    ...(input.expectedLastRevision === undefined ? {} : { expectedLastRevision: input.expectedLastRevision }),
  });
  const kvs = await dump(supervisor.clientUrl('private'));
  await supervisor.stop();
  return { result, kvs };
}

/** Every key of an etcd: key -> { value, modRevision }. */
export async function dump(clientUrl: string): Promise<Map<string, { value: string; modRevision: number }>> {
  const client = new Etcd3({ hosts: clientUrl });
  try {
    const res = await client.kv.range({ key: Buffer.from([0]), range_end: Buffer.from([0]) });
    return new Map(
      res.kvs.map((kv) => [kv.key.toString(), { value: kv.value.toString(), modRevision: Number(kv.mod_revision) }]),
    );
  } finally {
    client.close();
  }
}
