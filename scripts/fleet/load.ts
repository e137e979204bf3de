/**
 * The fleet benchmark's load: API clients with a read-mostly mix and background churn (creations,
 * deletions, hibernations), a migration driver that keeps a few migrations going (each with a stand-in
 * sidecar, test/harness/fake-sidecar.ts, on its source so that the good path finds a final snapshot), and
 * the periodic jobs at their periods.
 */
import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { GardenClient } from '../../adapters/http/garden-client.js';
import type { Deployment } from '../../local/deploy.js';
import { FakeSidecar } from '../../harness/fake-sidecar.js';
import { technicalID } from '../../core/model/names.js';
import { JOBS, runJobRound, type JobName, type JobRound } from './jobs.js';

export type ApiOp = 'create' | 'get' | 'list' | 'delete' | 'hibernate' | 'migrate';

/** Relative weights of each client's next request; `migrate` is the migration driver's. */
export type ApiMix = Readonly<Partial<Record<Exclude<ApiOp, 'migrate'>, number>>>;

export const API_MIX: ApiMix = {
  get: 70,
  list: 20,
  create: 4,
  delete: 3,
  hibernate: 3,
};

export interface LoadRecord {
  latencies: Record<ApiOp, number[]>;
  failures: Record<ApiOp, string[]>;
  rounds: JobRound[];
  /** Rounds not started because the previous one of the same job still ran at its next slot. */
  overruns: Record<JobName, number>;
  migrations: { succeeded: number; failed: number; unfinished: number; durationsMs: number[] };
  churn: { created: number; deleted: number; hibernations: number };
}

export function emptyLoadRecord(): LoadRecord {
  const ops = ['create', 'get', 'list', 'delete', 'hibernate', 'migrate'] as const;
  return {
    latencies: Object.fromEntries(ops.map((o) => [o, []])) as unknown as LoadRecord['latencies'],
    failures: Object.fromEntries(ops.map((o) => [o, []])) as unknown as LoadRecord['failures'],
    rounds: [],
    overruns: Object.fromEntries(JOBS.map((j) => [j.name, 0])) as Record<JobName, number>,
    migrations: { succeeded: 0, failed: 0, unfinished: 0, durationsMs: [] },
    churn: { created: 0, deleted: 0, hibernations: 0 },
  };
}

/** The shoots the benchmark knows: the fleet it filled, and the churn's own (created with their deletion confirmed). */
export class Fleet {
  readonly names: string[] = [];
  private readonly busy = new Set<string>();
  private churnSerial = 0;

  constructor(readonly project: string) {}

  /** A random shoot no client is changing right now; `churnOnly` picks one the churn created. */
  pick(options: { churnOnly?: boolean } = {}): string | undefined {
    const pool = options.churnOnly ? this.names.filter((n) => n.startsWith('c')) : this.names;
    for (let tries = 0; tries < 20 && pool.length > 0; tries++) {
      const name = pool[Math.floor(Math.random() * pool.length)]!;
      if (!this.busy.has(name)) return name;
    }
    return undefined;
  }

  hold(name: string): void {
    this.busy.add(name);
  }
  release(name: string): void {
    this.busy.delete(name);
  }
  forget(name: string): void {
    this.names.splice(this.names.indexOf(name), 1);
    this.busy.delete(name);
  }
  nextChurnName(): string {
    this.churnSerial += 1;
    return `c${String(this.churnSerial).padStart(5, '0')}-${Date.now().toString(36)}`;
  }
}

/** A fleet shoot: not HA, placed by the scheduler, its deletion confirmed ahead (churn deletes it at once). */
export function shootBody(name: string): Record<string, unknown> {
  return {
    metadata: { name, annotations: { 'confirmation.gardener.cloud/deletion': 'true' } },
    spec: {
      provider: { type: 'aws' },
      region: 'eu-west-1',
      purpose: 'evaluation',
      networking: { nodes: '10.250.0.0/16', pods: '100.96.0.0/11', services: '100.64.0.0/13' },
      hibernation: { enabled: false },
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function timed(
  record: LoadRecord,
  op: ApiOp,
  call: () => Promise<{ status: number; body: unknown }>,
  ok: number[],
): Promise<{ status: number; body: unknown } | undefined> {
  const t0 = performance.now();
  try {
    const res = await call();
    const ms = performance.now() - t0;
    if (ok.includes(res.status)) record.latencies[op].push(ms);
    else record.failures[op].push(`${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
    return res;
  } catch (error) {
    record.failures[op].push(error instanceof Error ? error.message : String(error));
    return undefined;
  }
}

/** Reads alone, in the mix's proportion of gets to lists: what a fleet's size could slow, and nothing that changes it. */
export const READ_MIX: ApiMix = { get: API_MIX.get!, list: API_MIX.list! };

function chooseOp(mix: ApiMix): Exclude<ApiOp, 'migrate'> {
  const total = Object.values(mix).reduce((a, b) => a + b, 0);
  let r = Math.random() * total;
  for (const [op, weight] of Object.entries(mix) as [Exclude<ApiOp, 'migrate'>, number][]) {
    r -= weight;
    if (r < 0) return op;
  }
  return 'get';
}

/** One API client: a request, then `thinkMs`, until `until`. */
async function apiClient(options: {
  api: GardenClient;
  fleet: Fleet;
  record: LoadRecord;
  until: number;
  thinkMs: number;
  mix: ApiMix;
}): Promise<void> {
  const { api, fleet, record } = options;
  const base = `/projects/${fleet.project}/shoots`;
  while (Date.now() < options.until) {
    const op = chooseOp(options.mix);
    if (op === 'get') {
      const name = fleet.pick();
      if (name) await timed(record, 'get', () => api.request('GET', `${base}/${name}`), [200]);
    } else if (op === 'list') {
      const first = await timed(record, 'list', () => api.request('GET', base, { query: { limit: '100' } }), [200]);
      const token = (first?.body as { metadata?: { continue?: string } } | undefined)?.metadata?.continue;
      if (token)
        await timed(
          record,
          'list',
          () => api.request('GET', base, { query: { limit: '100', continue: token } }),
          [200],
        );
    } else if (op === 'create') {
      const name = fleet.nextChurnName();
      const res = await timed(
        record,
        'create',
        () => api.request('PUT', `${base}/${name}`, { body: shootBody(name) }),
        [201],
      );
      if (res?.status === 201) {
        fleet.names.push(name);
        record.churn.created += 1;
      }
    } else if (op === 'delete') {
      const name = fleet.pick({ churnOnly: true });
      if (name) {
        fleet.hold(name);
        const res = await timed(record, 'delete', () => api.request('DELETE', `${base}/${name}`), [200, 202]);
        if (res && res.status < 300) {
          fleet.forget(name);
          record.churn.deleted += 1;
        } else fleet.release(name);
      }
    } else {
      const name = fleet.pick();
      if (name) {
        fleet.hold(name);
        const current = await api.request<{ spec: { hibernation?: { enabled: boolean } } }>('GET', `${base}/${name}`);
        if (current.status === 200) {
          const enabled = !(current.body.spec.hibernation?.enabled ?? false);
          const res = await timed(
            record,
            'hibernate',
            () =>
              api.request('PATCH', `${base}/${name}`, {
                body: { spec: { hibernation: { enabled } } },
                headers: { 'content-type': 'application/merge-patch+json' },
              }),
            [200],
          );
          if (res?.status === 200) record.churn.hibernations += 1;
        }
        fleet.release(name);
      }
    }
    await sleep(options.thinkMs * (0.5 + Math.random()));
  }
}

/** One migration at a time, again and again: a stand-in sidecar on the source, `migrate` (mode auto), its end. */
async function migrationDriver(options: {
  api: GardenClient;
  deployment: Pick<Deployment, 'awsEndpoint' | 'region' | 'outputs'>;
  fleet: Fleet;
  record: LoadRecord;
  until: number;
}): Promise<void> {
  const { api, fleet, record } = options;
  while (Date.now() < options.until) {
    const name = fleet.pick();
    if (!name) {
      await sleep(1_000);
      continue;
    }
    fleet.hold(name);
    const path = `/projects/${fleet.project}/shoots/${name}`;
    let sidecar: FakeSidecar | undefined;
    try {
      const shoot = await api.request<{ status: { seedName?: string; lastOperation?: { state: string } } }>(
        'GET',
        path,
      );
      const seedName = shoot.body.status?.seedName;
      if (shoot.status !== 200 || !seedName || shoot.body.status.lastOperation?.state !== 'Succeeded') continue;
      const seed = await api.request<{ status: { identity: string } }>('GET', `/seeds/${seedName}`);
      sidecar = FakeSidecar.onDeployment(options.deployment as Deployment, {
        shoot: { project: fleet.project, name, technicalID: technicalID(fleet.project, name) },
        identity: seed.body.status.identity,
        bucket: `gl-backup-${seedName}`,
        intervalMs: 1_000,
      });
      await sidecar.start();
      const started = Date.now();
      const res = await timed(record, 'migrate', () => api.request('POST', `${path}/migrate`, { body: {} }), [202]);
      if (res?.status !== 202) continue;
      let state = 'Running';
      // The phase's end ends the wait too: a migration still running then is counted as such, not as failed.
      while (state === 'Running' && Date.now() < options.until) {
        await sleep(2_000);
        const m = await api.request<{ state: string }>('GET', `${path}/migration`);
        if (m.status === 200) state = m.body.state;
      }
      if (state === 'Running') record.migrations.unfinished += 1;
      else if (state === 'Succeeded') {
        record.migrations.succeeded += 1;
        record.migrations.durationsMs.push(Date.now() - started);
      } else {
        record.migrations.failed += 1;
        record.failures.migrate.push(`migration of ${name} ended ${state}`);
      }
    } catch (error) {
      record.failures.migrate.push(error instanceof Error ? error.message : String(error));
    } finally {
      sidecar?.stop();
      fleet.release(name);
    }
  }
}

/** Each job's rounds at its period: a round whose slot comes while the previous still runs is an overrun. */
async function jobLoop(options: {
  lambda: LambdaClient;
  deployment: Pick<Deployment, 'outputs'>;
  job: (typeof JOBS)[number];
  record: LoadRecord;
  until: number;
}): Promise<void> {
  const { job, record } = options;
  let next = Date.now();
  while (next < options.until) {
    const round = await runJobRound(options.lambda, options.deployment.outputs, job);
    record.rounds.push(round);
    next += job.periodSeconds * 1000;
    while (next < Date.now()) {
      record.overruns[job.name] += 1;
      next += job.periodSeconds * 1000;
    }
    await sleep(Math.max(0, Math.min(next, options.until) - Date.now()));
  }
}

/** The whole load for `durationMs`: clients, migrations, jobs; what each measured. */
export async function runLoad(options: {
  api: GardenClient;
  lambda: LambdaClient;
  deployment: Pick<Deployment, 'awsEndpoint' | 'region' | 'outputs'>;
  fleet: Fleet;
  durationMs: number;
  clients: number;
  migrations: number;
  thinkMs: number;
  /** The clients' requests (default `API_MIX`). */
  mix?: ApiMix;
  /** Whether the periodic jobs run at their periods meanwhile (default true). */
  jobs?: boolean;
}): Promise<LoadRecord> {
  const record = emptyLoadRecord();
  const until = Date.now() + options.durationMs;
  const mix = options.mix ?? API_MIX;
  await Promise.all([
    ...Array.from({ length: options.clients }, () =>
      apiClient({ api: options.api, fleet: options.fleet, record, until, thinkMs: options.thinkMs, mix }),
    ),
    ...Array.from({ length: options.migrations }, () =>
      migrationDriver({ api: options.api, deployment: options.deployment, fleet: options.fleet, record, until }),
    ),
    ...(options.jobs === false ? [] : JOBS).map((job) =>
      jobLoop({ lambda: options.lambda, deployment: options.deployment, job, record, until }),
    ),
  ]);
  return record;
}
