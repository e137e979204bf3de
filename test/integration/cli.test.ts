import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { freePort } from '../../seed/ports.js';
import { runCli, type CliRun } from '../harness/cli.js';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';
import { testSeedCluster } from '../harness/kube/seed-cluster.js';
import { KubeObjects } from '../../seed/kubernetes/kube-api.js';
import type { KubernetesObject } from '@kubernetes/client-node';

/**
 * The built CLI (bin/gardenless) as a subprocess against the deployed stack: every kubectl-level behaviour
 * of issue 14, its exit code and its output in each format.
 */
const garden = testGarden();
const { apiUrl, region } = garden.deployment;

const cli = (args: string[], options: { input?: string; env?: Record<string, string> } = {}) =>
  runCli({ apiUrl, region }, args, options);

const dir = mkdtempSync(join(tmpdir(), 'gardenless-cli-'));
const seedYaml = (name: string, i: number, capacity = 10) => `apiVersion: core.gardenless.io/v1
kind: Seed
metadata:
  name: ${name}
spec:
  provider: { type: aws, region: eu-west-1, zones: [eu-west-1a, eu-west-1b, eu-west-1c] }
  backup: { bucket: gl-backup-${name}, region: eu-west-1 }
  networks: { nodes: 10.${i}.0.0/16, pods: 10.20${i}.0.0/16, services: 10.21${i}.0.0/16 }
  capacity: { shoots: ${capacity} }
`;
const shootYaml = (project: string, name: string) => `apiVersion: core.gardenless.io/v1
kind: Shoot
metadata:
  project: ${project}
  name: ${name}
spec:
  provider: { type: aws }
  region: eu-west-1
  networking: { nodes: 10.250.0.0/16, pods: 100.96.0.0/11, services: 100.64.0.0/13 }
`;

async function heartbeat(seed: string): Promise<void> {
  const res = await garden.setup.request('POST', `/seeds/${seed}/heartbeat`, {
    body: {
      conditions: [
        { type: 'GardenletReady', status: 'True' },
        { type: 'BackupBucketsReady', status: 'True' },
      ],
      leaseDurationSeconds: 600,
    },
  });
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  await resetGardenState(garden);
  writeFileSync(join(dir, 'seeds.yaml'), `${seedYaml('cli-a', 1)}---\n${seedYaml('cli-b', 2)}`);
  writeFileSync(join(dir, 'shoot.yaml'), shootYaml('cli', 'web'));
}, 120_000);

describe('the gardenless CLI against the deployed stack', () => {
  it('prints its version and help without the API, and exits 0', async () => {
    const version = await cli(['--version']);
    const help = await cli(['--help']);
    expect(version).toMatchObject({ code: 0, stdout: '0.1.0\n' });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Commands:[\s\S]*apply[\s\S]*seed[\s\S]*shoot[\s\S]*schedule[\s\S]*completion/);
    expect(help.stderr).toBe('');
  });

  it('applies YAML seeds: created, then unchanged with the same resourceVersion, then configured', async () => {
    const created = await cli(['apply', '-f', join(dir, 'seeds.yaml')]);
    const before = (await garden.api.request<{ metadata: { resourceVersion: string } }>('GET', '/seeds/cli-a')).body
      .metadata.resourceVersion;
    const unchanged = await cli(['seed', 'apply', '-f', join(dir, 'seeds.yaml')]);
    const after = (await garden.api.request<{ metadata: { resourceVersion: string } }>('GET', '/seeds/cli-a')).body
      .metadata.resourceVersion;
    writeFileSync(join(dir, 'seed-a.json'), JSON.stringify(parse(seedYaml('cli-a', 1, 20))));
    const configured = await cli(['apply', '-f', join(dir, 'seed-a.json')]);

    expect(created).toMatchObject({ code: 0, stdout: 'seed/cli-a created\nseed/cli-b created\n' });
    expect(unchanged).toMatchObject({ code: 0, stdout: 'seed/cli-a unchanged\nseed/cli-b unchanged\n' });
    expect(after).toBe(before);
    expect(configured).toMatchObject({ code: 0, stdout: 'seed/cli-a configured\n' });
    await heartbeat('cli-a');
    await heartbeat('cli-b');
  }, 120_000);

  it('applies a shoot from stdin; re-applying it once placed is unchanged, not a 422 on spec.seedName', async () => {
    const created = await cli(['shoot', 'apply', '-f', '-'], { input: shootYaml('cli', 'web') });
    const placed = await cli(['-o', 'json', 'shoot', 'get', 'cli/web']);
    const again = await cli(['apply', '-f', join(dir, 'shoot.yaml')]);

    expect(created).toMatchObject({ code: 0, stdout: 'shoot/cli/web created\n' });
    const seedName = (JSON.parse(placed.stdout) as { status: { seedName?: string } }).status.seedName;
    expect(['cli-a', 'cli-b']).toContain(seedName);
    expect(again).toMatchObject({ code: 0, stdout: 'shoot/cli/web unchanged\n', stderr: '' });
  }, 120_000);

  it('lists seeds with READY from every condition and the lease, in every format', async () => {
    const table = await cli(['seed', 'list']);
    const wide = await cli(['-o', 'wide', 'seed', 'list']);
    const json = await cli(['-o', 'json', 'seed', 'list']);
    const yaml = await cli(['-o', 'yaml', 'seed', 'get', 'cli-a']);
    const names = await cli(['-o', 'name', 'seed', 'list']);
    const one = await cli(['seed', 'get', 'seed/cli-b']);

    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(
      /^NAME\s+PROVIDER\s+REGION\s+SHOOTS\s+READY\s+MULTI-ZONAL\s+HEARTBEAT\s+AGE$/,
    );
    expect(table.stdout).toMatch(/^cli-a\s+aws\s+eu-west-1\s+\d\/20\s+True\s/m);
    expect(wide.stdout.split('\n')[0]).toMatch(/ZONES\s+BACKUP\s+NOT READY$/);
    expect(wide.stdout).toMatch(/eu-west-1a,eu-west-1b,eu-west-1c\s+gl-backup-cli-a\s+<none>/);
    expect(JSON.parse(json.stdout)).toMatchObject({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { kind: 'Seed', metadata: { name: 'cli-a' } },
        { kind: 'Seed', metadata: { name: 'cli-b' } },
      ],
    });
    expect(parse(yaml.stdout)).toMatchObject({
      kind: 'Seed',
      metadata: { name: 'cli-a' },
      spec: { capacity: { shoots: 20 } },
    });
    expect(names.stdout).toBe('seed/cli-a\nseed/cli-b\n');
    expect(one.stdout.split('\n')).toHaveLength(3);
  }, 120_000);

  it('lists shoots of a project and of every project (-A); an unknown project is an error exit', async () => {
    await cli(['apply', '-f', '-'], { input: shootYaml('ops', 'db') });
    const project = await cli(['shoot', 'list', 'cli']);
    const all = await cli(['shoot', 'list', '-A']);
    const names = await cli(['-o', 'name', 'shoot', 'list', '-A']);
    const unknown = await cli(['shoot', 'list', 'nosuch']);
    const neither = await cli(['shoot', 'list']);

    expect(project.stdout.split('\n')[0]).toMatch(/^NAME\s+SEED\s+HA\s+HIBERNATED\s+LAST OPERATION\s+AGE$/);
    expect(project.stdout).toMatch(/^web\s+cli-[ab]\s/m);
    expect(all.stdout.split('\n')[0]).toMatch(/^PROJECT\s+NAME\s+SEED/);
    expect(names.stdout).toBe('shoot/cli/web\nshoot/ops/db\n');
    expect(unknown).toMatchObject({ code: 1, stdout: '', stderr: 'No resources found in project "nosuch".\n' });
    expect(neither.code).toBe(1);
    expect(neither.stderr).toMatch(/pass -A/);
  }, 120_000);

  it("shows the scheduler's ranking and every rejection for a shoot file", async () => {
    await cli(['apply', '-f', '-'], { input: seedYaml('cli-full', 3, 0) });
    const res = await cli(['schedule', 'dry-run', '-f', join(dir, 'shoot.yaml')]);
    const json = await cli(['-o', 'json', 'schedule', 'dry-run', '-f', join(dir, 'shoot.yaml')]);

    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^RANK\s+SEED\s+SCORE/m);
    expect(res.stdout).toMatch(/^1\s+cli-[ab]\s/m);
    expect(res.stdout).toMatch(/^REJECTED\s+FILTER\s+REASON$/m);
    expect(res.stdout).toMatch(/^cli-full\s+\S+/m);
    expect(JSON.parse(json.stdout)).toMatchObject({ eligible: 2, total: 3 });
  }, 120_000);

  it('prints the control-plane layout as a v1 List whose objects a real API server admits', async () => {
    const res = await cli(['shoot', 'controlplane', 'cli/web']);
    const list = parse(res.stdout) as {
      apiVersion: string;
      kind: string;
      items: { kind: string; spec?: { template?: { spec: { containers: { image: string }[] } } } }[];
    };

    expect(res.code).toBe(0);
    expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List' });
    expect(list.items[0]).toMatchObject({ kind: 'Namespace', metadata: { name: 'shoot--cli--web' } });
    const workloads = list.items.filter((i) => i.kind === 'Deployment' || i.kind === 'StatefulSet');
    expect(workloads).toHaveLength(7);
    for (const w of workloads) expect(w.spec!.template!.spec.containers[0]!.image).toMatch(/:/);

    // A real API server admits every object (server-side dry run), the namespace applied for real first.
    const cluster = await testSeedCluster();
    const admin = new KubeObjects(cluster.kubeConfig());
    const [namespace, ...rest] = list.items as unknown as KubernetesObject[];
    await admin.apply(namespace!);
    for (const object of rest) {
      const admitted = await admin.apply(object, { dryRun: true });
      expect(admitted.metadata?.uid, `${object.kind} ${object.metadata?.name}`).toBeDefined();
    }
  }, 600_000);

  it('previews a migration (destination, path, steps, fence bound) and starts nothing', async () => {
    // The seeds' agents heartbeat every second while the dry run runs, as live agents do (the test stack's
    // interval is 2 s, so the source counts as reachable for 6 s after a beat): the good path.
    const beat = () => Promise.all(['cli-a', 'cli-b'].map((seed) => heartbeat(seed)));
    await beat();
    const beating = setInterval(() => void beat().catch(() => undefined), 1_000);
    let res: CliRun;
    try {
      res = await cli(['shoot', 'migrate', 'cli/web', '--dry-run']);
    } finally {
      clearInterval(beating);
    }
    const bad = await cli(['-o', 'json', 'shoot', 'migrate', 'cli/web', '--mode', 'bad', '--dry-run']);
    // An explicit wait for the final snapshot goes with the request, checked as a duration by the API.
    const patient = await cli(['shoot', 'migrate', 'cli/web', '--final-snapshot-wait', '30m', '--dry-run']);
    const wrong = await cli(['shoot', 'migrate', 'cli/web', '--final-snapshot-wait', '30 minutes', '--dry-run']);
    const migration = await garden.api.request('GET', '/projects/cli/shoots/web/migration');

    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/destination: +cli-[ab]/);
    expect(res.stdout).toMatch(/path: +good \(the source's last heartbeat is/);
    expect(res.stdout).toMatch(/fence bound: +\d+\.\d s/);
    expect(res.stdout).toMatch(/^migrate-extensions\s/m);
    const preview = JSON.parse(bad.stdout) as { path: string; steps: { id: string }[]; fenceBoundMs: number };
    expect(preview.path).toBe('bad');
    // The pre-copy first, on the bad path too; then the bad path's entry.
    expect(preview.steps.map((s) => s.id).slice(0, 3)).toEqual([
      'pre-copy-snapshots',
      'restore-etcd-ahead',
      'set-owner-destination',
    ]);
    expect(preview.fenceBoundMs).toBeGreaterThan(0);
    expect(patient.code).toBe(0);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/finalSnapshotWait.*must be a duration such as 90s, 10m or 1h30m/);
    expect(migration.status).toBe(404);
  }, 120_000);

  it('asks before a bad-path migration and does nothing when the answer is no', async () => {
    const refused = await cli(['shoot', 'migrate', 'cli/web', '--mode', 'bad'], { input: 'n\n' });
    const migration = await garden.api.request('GET', '/projects/cli/shoots/web/migration');

    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/Migrate cli\/web on the bad path\? .*\[y\/N\]/);
    expect(refused.stderr).toMatch(/not confirmed; nothing done/);
    expect(migration.status).toBe(404);
  }, 120_000);

  it("deletes a shoot only when confirmed, with Gardener's confirmation annotation", async () => {
    // Prepare: ops/db is placed (no agent runs here), so a deletion marks it and waits for its seed.
    const placed = await garden.api.request<{ status: { seedName?: string } }>('GET', '/projects/ops/shoots/db');
    expect(placed.body.status.seedName).toMatch(/^cli-[ab]$/);

    // Act
    const refused = await cli(['shoot', 'delete', 'ops/db'], { input: 'no\n' });
    const kept = await garden.api.request<{ metadata: { deletionTimestamp?: string } }>(
      'GET',
      '/projects/ops/shoots/db',
    );
    const confirmed = await cli(['shoot', 'delete', 'shoot/ops/db'], { input: 'y\n' });
    const marked = await garden.api.request<{
      metadata: { deletionTimestamp?: string; annotations?: Record<string, string> };
      status: { lastOperation?: { type: string } };
    }>('GET', '/projects/ops/shoots/db');

    // Assess: refused, nothing changed; confirmed, the shoot carries Gardener's annotation and is being deleted.
    expect(refused.code).toBe(1);
    expect(kept.status).toBe(200);
    expect(kept.body.metadata.deletionTimestamp).toBeUndefined();
    expect(confirmed).toMatchObject({ code: 0, stdout: 'shoot/ops/db deletion requested\n' });
    expect(marked.status).toBe(200);
    expect(marked.body.metadata).toMatchObject({
      deletionTimestamp: expect.any(String),
      annotations: { 'confirmation.gardener.cloud/deletion': 'true' },
    });
    expect(marked.body.status.lastOperation?.type).toBe('Delete');
  }, 120_000);

  it('waits for a shoot to run, and gives up after --timeout', async () => {
    // No agent runs on cli-a/cli-b here: the shoot's Create stays Processing.
    const res = await cli(['shoot', 'get', 'cli/web', '--wait', '--timeout', '2']);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe('error: cli/web: not running after 2 s\n');
  }, 60_000);

  it('answers API errors with the code and message, as JSON with -o json, and exit code 1', async () => {
    const table = await cli(['shoot', 'get', 'cli/nosuch']);
    const json = await cli(['-o', 'json', 'shoot', 'get', 'cli/nosuch']);

    expect(table).toMatchObject({ code: 1, stdout: '' });
    expect(table.stderr).toMatch(/^error 404 NotFound: /);
    expect(JSON.parse(json.stderr)).toMatchObject({ code: 'NotFound' });
  }, 120_000);

  it('names the host and the cause when the API cannot be reached', async () => {
    const port = await freePort();
    const res = await cli(['--api-url', `http://127.0.0.1:${port}/`, 'seed', 'list']);

    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      `error: cannot reach the garden API at 127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}\n`,
    );
  }, 60_000);

  it('prints completion scripts that the shells accept', async () => {
    const bash = await cli(['completion', 'bash']);
    const check = await new Promise<number>((resolve) => {
      const child = spawn('bash', ['-n'], { stdio: ['pipe', 'ignore', 'ignore'] });
      child.on('close', (code) => resolve(code ?? -1));
      child.stdin.end(bash.stdout);
    });

    expect(bash.code).toBe(0);
    expect(bash.stdout).toMatch(/complete -o default -F _gardenless gardenless/);
    expect(check).toBe(0);
    expect((await cli(['completion', 'fish'])).stdout).toMatch(
      /complete -c gardenless -n "__fish_use_subcommand" -a shoot/,
    );
    expect((await cli(['completion', 'zsh'])).stdout).toMatch(/^#compdef gardenless/);
  }, 60_000);

  it('parses multi-document output of -o yaml for several objects as one List', async () => {
    const res = await cli(['-o', 'yaml', 'shoot', 'list', '-A']);
    const docs = parseAllDocuments(res.stdout);
    expect(Array.isArray(docs) ? docs.length : 1).toBe(1);
    expect(parse(res.stdout)).toMatchObject({ apiVersion: 'v1', kind: 'List' });
  }, 60_000);
});
