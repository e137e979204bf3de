/**
 * What one shoot's control plane costs on the `local` runtime: a seed with the real agent, two shoots (a
 * non-HA one with one etcd, a `zone` one with three members), each with its real kube-apiserver,
 * kube-controller-manager and kube-scheduler behind the seed's load balancer. Per shoot: the time from
 * the create request until its Create succeeded (etcd restored or started, the components up,
 * kube-apiserver ready), and, after a settling minute, the resident memory of each of its processes
 * (the median of five samples 2 s apart), found by the plane's directory on their command lines.
 *
 *   npm run bench:control-plane
 */
import { readdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { GardenClient } from '../adapters/http/garden-client.js';
import type { LastOperation } from '../core/model/common.js';
import { technicalID } from '../core/model/names.js';
import { fixture } from '../harness/fixtures/index.js';
import { realKubeBinDir } from '../harness/kube/binaries.js';
import { portFreeOn } from '../harness/local-seed.js';
import { until } from '../harness/until.js';
import { emulatorCredentials } from '../local/aws-env.js';
import { LANDSCAPE_STACK_CONTEXT } from '../local/fleet.js';
import { benchLandscape, landscapeSeedAgent, median } from './bench-support.js';
import { startBenchRun, type Cell } from './bench-results.js';

const SHOOTS = [
  { name: 'single', kind: 'non-HA (one etcd)', controlPlane: undefined },
  {
    name: 'zone',
    kind: '`zone` (three etcd members)',
    controlPlane: { highAvailability: { failureTolerance: { type: 'zone' } } },
  },
] as const;
const SETTLE_MS = Number(process.env.BENCH_CONTROL_PLANE_SETTLE_MS ?? 60_000);
const SAMPLES = 5;
const MiB = 2 ** 20;

const record = startBenchRun({
  bench: 'control-plane',
  title: 'A control plane on the local runtime',
  command: 'npm run bench:control-plane',
  about:
    "One seed with the real agent and the landscape's settings, two shoots on it: a non-HA one and a `zone` one " +
    '(three etcd members; kube-apiserver, kube-controller-manager and kube-scheduler capped at one replica each on ' +
    "the local runtime). The time from the create request to the shoot's Create Succeeded (its components started, " +
    "kube-apiserver ready), and, after a settling minute, each process's resident memory (median of five samples).",
});

/**
 * A process's component from its command line (comm is cut at 15 characters): the executable's name, and
 * for a sidecar's two node processes, tsx's launcher apart from the sidecar it runs.
 */
function componentOf(cmdline: readonly string[]): string {
  const executable = basename(cmdline[0] ?? '');
  if (executable !== 'node') return executable;
  return basename(cmdline[1] ?? '') === 'tsx' ? 'sidecar launcher (tsx)' : 'sidecar';
}

/** Resident bytes of every process whose command line names `dir`, by component. */
function residentByComponent(dir: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!cmdline.some((arg) => arg.includes(dir))) continue;
      const component = componentOf(cmdline);
      const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1];
      out.set(component, [...(out.get(component) ?? []), Number(kb ?? 0) * 1024]);
    } catch {
      // It exited meanwhile.
    }
  }
  return out;
}

const started = performance.now();
const { deployment, close } = await benchLandscape({ context: { ...LANDSCAPE_STACK_CONTEXT }, landscapeContext: true });
const aws = { endpoint: deployment.awsEndpoint, region: deployment.region, credentials: emulatorCredentials() };
const api = new GardenClient({ ...aws, apiUrl: deployment.apiUrl, timeoutMs: 120_000, gatewayRetries: 5 });
const workDir = mkdtempSync(join(tmpdir(), 'gl-bench-control-plane-'));
const tag = Date.now().toString(36);
const seed = `cp-${tag}`;
const project = `cp${tag}`;
const lbHost = '127.0.0.63';
const agent = await landscapeSeedAgent({
  deployment,
  name: seed,
  networkIndex: 63,
  workDir,
  kubeBinDir: await realKubeBinDir(),
  loadBalancer: { host: lbHost, port: await portFreeOn([lbHost]) },
});
let completed = false;
try {
  await agent.agent.start();
  const createMs = new Map<string, number>();
  for (const shoot of SHOOTS) {
    const body = fixture('shoot-dev-api1');
    body.metadata = { name: shoot.name };
    body.spec.seedName = seed;
    delete body.spec.tolerations;
    if (shoot.controlPlane) body.spec.controlPlane = shoot.controlPlane;
    else delete body.spec.controlPlane;
    const t0 = performance.now();
    const res = await api.request('PUT', `/projects/${project}/shoots/${shoot.name}`, { body });
    if (res.status !== 201) throw new Error(`shoot ${shoot.name}: ${res.status} ${JSON.stringify(res.body)}`);
    await until(
      `${shoot.name}'s Create to succeed`,
      async () =>
        (
          await api.request<{ status: { lastOperation?: LastOperation } }>(
            'GET',
            `/projects/${project}/shoots/${shoot.name}`,
          )
        ).body.status.lastOperation?.state === 'Succeeded',
      { timeoutMs: 600_000, intervalMs: 250 },
    );
    createMs.set(shoot.name, performance.now() - t0);
    console.log(`${shoot.kind}: Create Succeeded ${((performance.now() - t0) / 1000).toFixed(1)} s after the request`);
  }
  console.log(`settling ${SETTLE_MS / 1000} s before the memory is read`);
  await sleep(SETTLE_MS);
  const rows: Cell[][] = [];
  for (const shoot of SHOOTS) {
    const dir = join(workDir, technicalID(project, shoot.name));
    const samples: Map<string, number[]>[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      samples.push(residentByComponent(dir));
      await sleep(2_000);
    }
    const components = [...new Set(samples.flatMap((s) => [...s.keys()]))].sort();
    let total = 0;
    for (const component of components) {
      const perSample = samples.map((s) => (s.get(component) ?? []).reduce((a, b) => a + b, 0));
      const processes = Math.max(...samples.map((s) => s.get(component)?.length ?? 0));
      const mib = median(perSample) / MiB;
      total += mib;
      rows.push([shoot.kind, component, processes, Math.round(mib)]);
      console.log(`${shoot.kind}: ${component} x${processes}: ${mib.toFixed(0)} MiB`);
    }
    rows.push([shoot.kind, 'all', samples[0] ? [...samples[0].values()].flat().length : 0, Math.round(total)]);
    console.log(`${shoot.kind}: all: ${total.toFixed(0)} MiB`);
  }
  record.save({
    settings: { settleSeconds: SETTLE_MS / 1000, samples: SAMPLES },
    aims: [],
    tables: [
      {
        title: 'From the create request to Create Succeeded (s)',
        columns: ['shoot', 'seconds'],
        rows: SHOOTS.map((s) => [s.kind, Math.round((createMs.get(s.name) ?? NaN) / 100) / 10]),
        decimals: [undefined, 1],
      },
      {
        title: 'Resident memory of each process kind (MiB, median of the samples)',
        columns: ['shoot', 'process', 'processes', 'MiB'],
        rows,
        decimals: [undefined, undefined, 0, 0],
      },
    ],
  });
  console.log(`the whole run took ${((performance.now() - started) / 60_000).toFixed(1)} min`);
  completed = true;
} finally {
  await agent.agent.stop().catch(() => undefined);
  await agent
    .hosting()
    .stopAll()
    .catch(() => undefined);
  if (completed) rmSync(workDir, { recursive: true, force: true });
  else console.log(`stopped early; the agent's work dir is kept in ${workDir}`);
  await close();
}
process.exit(0);
