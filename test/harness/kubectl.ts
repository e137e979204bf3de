import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { MigrationRecord } from '../../core/migration/index.js';
import type { LastOperation } from '../../core/model/common.js';
import { registerSeedWithAgent, type AgentProcess } from '../../harness/agent-process.js';
import { backedSeed, fixture } from '../../harness/fixtures/index.js';
import type { GardenClients } from '../../harness/garden.js';
import { portFreeOn } from '../../harness/local-seed.js';
import { TEST_OWNERSHIP_TIMINGS } from '../../harness/timings.js';
import type { until as untilFn } from '../../harness/until.js';
import { runCli, type CliRun } from './cli.js';

/**
 * An unmodified kubectl (from `kubeBin`) with only the given kubeconfig: no KUBECONFIG, no flag that could
 * name the server, a 10 s request timeout so that a frozen peer costs a bounded wait.
 */
export function kubectl(
  kubeBin: string,
  options: { kubeconfig: string; args: string[]; input?: string },
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    delete env.KUBECONFIG;
    const child = spawn(
      join(kubeBin, 'kubectl'),
      ['--kubeconfig', options.kubeconfig, '--request-timeout=10s', ...options.args],
      { env },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout: stdout.trim(), stderr: stderr.trim() }));
    child.stdin.end(options.input ?? '');
  });
}

/** kubectl until it succeeds (kube-apiserver starting, the API record's TTL running out); its output. */
export async function kubectlOk(
  input: { kubeBin: string; until: typeof untilFn; what: string; kubeconfig: string; context?: () => string },
  ...args: string[]
): Promise<string> {
  let last: CliRun | undefined;
  return input.until(
    input.what,
    async () => {
      last = await kubectl(input.kubeBin, { kubeconfig: input.kubeconfig, args });
      return last.code === 0 ? last.stdout : undefined;
    },
    { explain: () => `kubectl ${args.join(' ')}: ${last?.stderr}\n${input.context?.() ?? ''}` },
  );
}

/** `gardenless shoot kubeconfig P/N [flags]`, written to `file` as printed; the parsed kubeconfig. */
export async function printKubeconfig(
  target: { apiUrl: string; region: string },
  shoot: string,
  file: string,
  ...flags: string[]
): Promise<Record<string, unknown>> {
  const res = await runCli(target, ['shoot', 'kubeconfig', shoot, ...flags]);
  if (res.code !== 0) throw new Error(`gardenless shoot kubeconfig ${shoot} failed: ${res.stderr}`);
  writeFileSync(file, res.stdout, { mode: 0o600 });
  return parse(res.stdout) as Record<string, unknown>;
}

/**
 * Seed agents that run the real kube components, each seed's load balancer on its own loopback address
 * (one port for all, as a real landscape's), registered in order; then a shoot on the first of them whose
 * Create has succeeded. The agents are set in `agents` as they start, so that a failure still stops them.
 */
export async function kubeSeedsWithShoot(input: {
  garden: GardenClients;
  workDir: string;
  /** Seed name to its load balancer's address. */
  seeds: Readonly<Record<string, string>>;
  /** backedSeed's network index of the first seed (the next ones count up). */
  networkIndex: number;
  agents: Map<string, AgentProcess>;
  shoot: { project: string; name: string; controlPlane?: Record<string, unknown> };
  until: typeof untilFn;
}): Promise<{ lbPort: number }> {
  const { garden, shoot } = input;
  const names = Object.keys(input.seeds);
  const [first, ...others] = Object.values(input.seeds);
  if (first === undefined) throw new Error('no seed to start');
  const lbPort = await portFreeOn([first, ...others]);
  for (const [i, name] of names.entries())
    input.agents.set(
      name,
      await registerSeedWithAgent({
        garden: garden.setup,
        seed: name,
        body: backedSeed(name, input.networkIndex + i),
        workDir: input.workDir,
        deployment: garden.deployment,
        ownership: TEST_OWNERSHIP_TIMINGS,
        kube: 'real',
        loadBalancer: { host: input.seeds[name]!, port: lbPort },
      }),
    );
  const body = fixture('shoot-dev-api1');
  body.metadata = { name: shoot.name };
  body.spec.seedName = names[0]!;
  delete body.spec.tolerations;
  if (shoot.controlPlane) body.spec.controlPlane = shoot.controlPlane;
  else delete body.spec.controlPlane;
  const put = await garden.api.request('PUT', `/projects/${shoot.project}/shoots/${shoot.name}`, { body });
  if (put.status !== 201)
    throw new Error(`shoot ${shoot.project}/${shoot.name}: ${put.status} ${JSON.stringify(put.body)}`);
  await input.until(
    'Create Succeeded',
    async () =>
      (
        await garden.api.request<{ status: { lastOperation?: LastOperation } }>(
          'GET',
          `/projects/${shoot.project}/shoots/${shoot.name}`,
        )
      ).body.status.lastOperation?.state === 'Succeeded',
  );
  return { lbPort };
}

/** A migration asked for and waited out: its record once it no longer runs (Succeeded or not: the caller asserts). */
export async function migrateShoot(input: {
  api: GardenClients['api'];
  project: string;
  shoot: string;
  destinationSeed: string;
  mode: 'auto' | 'good' | 'bad' | 'live';
  until: typeof untilFn;
}): Promise<MigrationRecord> {
  const base = `/projects/${input.project}/shoots/${input.shoot}`;
  const started = await input.api.request('POST', `${base}/migrate`, {
    body: { destinationSeed: input.destinationSeed, mode: input.mode },
  });
  if (started.status !== 202) throw new Error(`migrate: ${started.status} ${JSON.stringify(started.body)}`);
  return input.until('the migration to settle', async () => {
    const res = await input.api.request<MigrationRecord>('GET', `${base}/migration`);
    return res.body.state !== 'Running' ? res.body : undefined;
  });
}
