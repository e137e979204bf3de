import { Route53Client } from '@aws-sdk/client-route-53';
import { promises as dns } from 'node:dns';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import type { LookupFunction } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Route53ApiRecords } from '../../adapters/route53/api-records.js';
import { route53Api } from '../../adapters/route53/route53-api.js';
import { apiDomainName, type ApiRecord } from '../../core/dns/index.js';
import type { MigrationRecord } from '../../core/migration/index.js';
import type { LastOperation } from '../../core/model/common.js';
import { technicalID } from '../../core/model/names.js';
import { fixture } from '../../harness/fixtures/index.js';
import { runCli } from '../harness/cli.js';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';
import { DNSMASQ_PATH, freeDnsPort, startDnsmasq, type Dnsmasq } from '../harness/dnsmasq.js';
import { gatewayPut } from '../../harness/scenario/etcd-client.js';
import { untilWith } from '../../harness/until.js';
import { TEST_API_RECORD_TTL_SECONDS } from '../../harness/timings.js';
import { portFreeOn, registerLocalSeed, startLocalSeedAgent, type LocalSeed } from '../../harness/local-seed.js';

/**
 * The shoot's API record on the deployed stack with real seed agents (local runtime): written once the
 * control plane serves, switched by a migration only after the destination serves (good and bad path,
 * judged by a writer's timeline), left on the source by a failed migration, removed by delete. A client
 * that resolves the API domain through a real DNS server on loopback (dnsmasq, fed from the Route 53
 * zone) reaches the seed the record names. Each seed's load balancer has a loopback address of its own
 * and the shoot the same port on both, as 443 is on real load balancers.
 */
const garden = testGarden();
const { api, deployment, aws } = garden;
const records = new Route53ApiRecords({
  hostedZoneId: deployment.outputs.ApiHostedZoneId!,
  api: route53Api(new Route53Client(aws)),
});
const externalDomain = deployment.outputs.ExternalDomain!;
const project = 'dnsrec';
const shootName = 'web';
const id = technicalID(project, shootName);
const API = apiDomainName({ shoot: shootName, project, externalDomain });
const LB = { 'dns-a': '127.0.0.2', 'dns-b': '127.0.0.3' } as const;
type SeedName = keyof typeof LB;
const workDir = mkdtempSync(join(tmpdir(), 'gl-api-record-'));
const hostsFile = join(workDir, 'zone.hosts');
const agents = new Map<SeedName, LocalSeed>();
const logs: string[] = [];
const CONFIRM = { metadata: { annotations: { 'confirmation.gardener.cloud/deletion': 'true' } } };
const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };
let lbPort = 0;
let dnsmasq: Dnsmasq | undefined;

type MigrationView = MigrationRecord & { progress: number };
interface ShootView {
  status: { seedName?: string; lastOperation?: LastOperation; advertisedAddresses?: { name: string; url: string }[] };
}

async function startAgent(name: SeedName): Promise<void> {
  agents.set(
    name,
    await startLocalSeedAgent({
      deployment,
      garden: api,
      name,
      workDir: join(workDir, name),
      // Where the record points and who answers, not Kubernetes: the harness's kube-apiserver answers health and /version.
      loadBalancer: { host: LB[name], port: lbPort },
      log: (entry) => logs.push(JSON.stringify({ seed: name, ...entry })),
    }),
  );
}

const until = untilWith({ intervalMs: 250, explain: () => logs.slice(-20).join('\n') });

const shoot = async () => (await api.request<ShootView>('GET', `/projects/${project}/shoots/${shootName}`)).body;
/** What `gardenless -o yaml shoot get` and `shoot kubeconfig` say: the advertised addresses and the kubeconfig's server. */
async function cliView(): Promise<{ advertised: ShootView['status']['advertisedAddresses']; server: string }> {
  const get = await runCli(deployment, ['-o', 'yaml', 'shoot', 'get', `${project}/${shootName}`]);
  expect(get.code, get.stderr).toBe(0);
  const kubeconfig = await runCli(deployment, ['shoot', 'kubeconfig', `${project}/${shootName}`]);
  expect(kubeconfig.code, kubeconfig.stderr).toBe(0);
  const config = parse(kubeconfig.stdout) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
  };
  clusterCA = Buffer.from(config.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString();
  return {
    advertised: (parse(get.stdout) as ShootView).status.advertisedAddresses,
    server: config.clusters[0]!.cluster.server,
  };
}
/** The shoot's cluster CA, from the kubeconfig the CLI printed. */
let clusterCA = '';

const migration = async () =>
  (await api.request<MigrationView>('GET', `/projects/${project}/shoots/${shootName}/migration`)).body;

async function migrate(destinationSeed: SeedName, mode: 'good' | 'bad'): Promise<MigrationView> {
  const started = await api.request('POST', `/projects/${project}/shoots/${shootName}/migrate`, {
    body: { destinationSeed, mode },
  });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  return until(
    'the migration to settle',
    async () => {
      const m = await migration();
      return m.state !== 'Running' ? m : undefined;
    },
    { timeoutMs: 180_000 },
  );
}

/** The Route 53 zone as a DNS server serves it: the API records written into dnsmasq's hosts file. */
async function publishZone(): Promise<void> {
  const lines = (await records.list())
    .filter((r) => r.type === 'A' || r.type === 'AAAA')
    .map((r) => `${r.value} ${r.name}`);
  writeFileSync(hostsFile, `${lines.join('\n')}\n`);
  await dnsmasq?.reload();
}

/**
 * What a client that knows only the API domain reaches: it resolves the name through dnsmasq and asks
 * `/version` over TLS, the shoot's CA checked; the seed is the one whose load balancer address answered.
 */
async function reachedThroughDns(): Promise<string> {
  const resolver = new dns.Resolver({ timeout: 500, tries: 2 });
  resolver.setServers([`127.0.0.1:${dnsmasq!.port}`]);
  // Node asks for every address (`all`) when it may try several, and for one otherwise.
  const lookup = ((
    hostname: string,
    options: { all?: boolean },
    callback: (error: Error | null, address: unknown, family?: number) => void,
  ) => {
    resolver.resolve4(hostname).then(
      (addresses) =>
        options.all
          ? callback(
              null,
              addresses.map((address) => ({ address, family: 4 })),
            )
          : callback(null, addresses[0]!, 4),
      (error: NodeJS.ErrnoException) => callback(error, options.all ? [] : '', 4),
    );
  }) as LookupFunction;
  return new Promise((resolve, reject) => {
    const req = request({ host: API, port: lbPort, path: '/version', lookup, timeout: 2_000, ca: clusterCA }, (res) => {
      res.resume();
      const address = res.socket.remoteAddress;
      res.on('end', () => resolve(Object.entries(LB).find(([, lb]) => lb === address)?.[0] ?? `${address}?`));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

/**
 * The writer's timeline and the record's: a writer puts a key every 25 ms into the etcd of each seed that
 * has one (as a client behind a load balancer would reach whichever serves), noting when each seed first
 * acknowledged; a poller reads the API record every 100 ms, noting the last time it still named `from`.
 */
function watch(from: string, to: SeedName) {
  let running = true;
  let firstAckOnDestination: number | undefined;
  let lastSeenOnSource: number | undefined;
  let n = 0;
  const writer = (async () => {
    while (running) {
      const endpoint = agents.get(to)?.hosting().sidecar(id)?.clientUrl;
      if (endpoint && firstAckOnDestination === undefined) {
        await gatewayPut({ endpoint, key: `/api-record/${to}/${n++}`, value: 'x', timeoutMs: 500 }).then(
          () => void (firstAckOnDestination ??= Date.now()),
          () => undefined,
        );
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  const poller = (async () => {
    while (running) {
      const seenAt = Date.now();
      const record = await records.get(API).catch(() => undefined);
      if (record?.value === from) lastSeenOnSource = seenAt;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await Promise.all([writer, poller]);
      return { firstAckOnDestination, lastSeenOnSource };
    },
  };
}

describe.skipIf(DNSMASQ_PATH.length === 0)(
  'the API record follows the control plane (Route 53 on the emulator, dnsmasq on loopback)',
  () => {
    beforeAll(async () => {
      await resetGardenState(garden);
      lbPort = await portFreeOn([LB['dns-a'], LB['dns-b']]);
      writeFileSync(hostsFile, '\n');
      dnsmasq = await startDnsmasq({ port: await freeDnsPort(), domain: externalDomain, hostsFile });
      for (const [i, name] of (['dns-a', 'dns-b'] as const).entries()) {
        await registerLocalSeed({ garden: api, deployment, name, networkIndex: 80 + i });
        await startAgent(name);
      }
    });

    afterAll(async () => {
      await Promise.all([...agents.values()].map((a) => a.agent.stop()));
      await dnsmasq?.stop();
      rmSync(workDir, { recursive: true, force: true });
    });

    it("create writes the record once the control plane serves: A of seed dns-a's load balancer, with the deployment's TTL", async () => {
      const body = fixture('shoot-dev-api1');
      body.metadata = { name: shootName };
      body.spec.seedName = 'dns-a';
      delete body.spec.tolerations;
      delete body.spec.controlPlane;
      expect((await api.request('PUT', `/projects/${project}/shoots/${shootName}`, { body })).status).toBe(201);
      await until('Create Succeeded', async () => (await shoot()).status.lastOperation?.state === 'Succeeded');
      expect(await records.get(API)).toEqual<ApiRecord>({
        name: API,
        type: 'A',
        value: LB['dns-a'],
        ttl: TEST_API_RECORD_TTL_SECONDS,
      });
      // The shoot advertises the API domain on the load balancer's scheme and port.
      const url = `https://${API}:${lbPort}`;
      expect((await shoot()).status.advertisedAddresses).toEqual([{ name: 'external', url }]);
      expect(await cliView()).toEqual({ advertised: [{ name: 'external', url }], server: url });
      await publishZone();
      expect(await reachedThroughDns()).toBe('dns-a');
    });

    it("a good-path migration switches it to the destination after the destination's first acknowledged write, never earlier", async () => {
      const timeline = watch(LB['dns-a'], 'dns-b');
      const m = await migrate('dns-b', 'good');
      const { firstAckOnDestination, lastSeenOnSource } = await timeline.stop();
      expect(m.state, JSON.stringify(m.error)).toBe('Succeeded');
      expect(m.path).toBe('good');
      expect(m.steps.find((s) => s.id === 'switch-api-record')).toMatchObject({
        state: 'succeeded',
        message: expect.stringContaining(`A ${LB['dns-b']}`),
      });
      expect(firstAckOnDestination).toBeDefined();
      // At some time after the destination acknowledged its first write, the record still named the source.
      expect(lastSeenOnSource!).toBeGreaterThanOrEqual(firstAckOnDestination!);
      console.log(
        `good path: record on the source still ${lastSeenOnSource! - firstAckOnDestination!} ms after the destination's first acknowledged write`,
      );
      expect(await records.get(API)).toMatchObject({ type: 'A', value: LB['dns-b'] });
      // The same name and port on the destination: what users were given still reaches the shoot.
      expect((await shoot()).status.advertisedAddresses).toEqual([
        { name: 'external', url: `https://${API}:${lbPort}` },
      ]);
      await publishZone();
      expect(await reachedThroughDns()).toBe('dns-b');
    });

    it('a bad-path migration switches it back only after the destination serves', async () => {
      const timeline = watch(LB['dns-b'], 'dns-a');
      const m = await migrate('dns-a', 'bad');
      const { firstAckOnDestination, lastSeenOnSource } = await timeline.stop();
      expect(m.state, JSON.stringify(m.error)).toBe('Succeeded');
      expect(m.path).toBe('bad');
      expect(firstAckOnDestination).toBeDefined();
      expect(lastSeenOnSource!).toBeGreaterThanOrEqual(firstAckOnDestination!);
      expect(await records.get(API)).toMatchObject({ type: 'A', value: LB['dns-a'] });
      await publishZone();
      expect(await reachedThroughDns()).toBe('dns-a');
    });

    it("a failed migration (the destination's agent is gone) leaves it on the source", async () => {
      await agents.get('dns-b')!.agent.stop();
      agents.delete('dns-b');
      const m = await migrate('dns-b', 'bad');
      expect(m.state).toBe('Error');
      expect(m.steps.find((s) => s.id === 'switch-api-record')?.state).toBe('pending');
      expect(await records.get(API)).toMatchObject({ type: 'A', value: LB['dns-a'] });
      // Resumed with the destination back, the migration ends and the record follows.
      await startAgent('dns-b');
      const resumed = await migrate('dns-b', 'bad');
      expect(resumed.state, JSON.stringify(resumed.error)).toBe('Succeeded');
      expect(await records.get(API)).toMatchObject({ type: 'A', value: LB['dns-b'] });
      // The restore to the agent that is gone is sent three times (a slow restore is resent, not given up;
      // the emulator does not time out a task whose heartbeats stopped, which on AWS ends it sooner).
    }, 360_000);

    it('delete removes it', async () => {
      expect(
        (
          await api.request('PATCH', `/projects/${project}/shoots/${shootName}`, {
            body: CONFIRM,
            headers: MERGE_PATCH,
          })
        ).status,
      ).toBe(200);
      expect((await api.request('DELETE', `/projects/${project}/shoots/${shootName}`)).status).toBe(202);
      await until(
        'the shoot gone',
        async () => (await api.request('GET', `/projects/${project}/shoots/${shootName}`)).status === 404,
      );
      expect(await records.get(API)).toBeUndefined();
    });
  },
);
