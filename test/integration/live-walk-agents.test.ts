import { Route53Client } from '@aws-sdk/client-route-53';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { Etcd3 } from 'etcd3';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { COMMAND_API_VERSION, type CommandOf, type SeedCommand } from '../../core/commands/index.js';
import { ownerRecordName } from '../../core/ownership/index.js';
import { formatOwnerValue } from '../../core/ownership/owner-value.js';
import {
  checkHistory,
  HistoryRecorder,
  longestGap,
  recordFinalReads,
  startClusterWriter,
} from '../../harness/scenario/index.js';
import { ControlPlaneRuntime } from '../../seed/agent/control-plane-runtime.js';
import { LocalHosting } from '../../seed/agent/local-hosting.js';
import { clusterIdHex, leaseTimeToLive, memberAdd, memberList } from '../../seed/backup-restore/etcd-gateway.js';
import { httpsGet } from '../../harness/kube/binaries.js';
import { contractSecrets } from '../contract/seed-runtime.contract.js';
import { testGarden } from '../harness/garden.js';
import { localRuntimeOnEmulator } from '../harness/local-runtime.js';
import { cleanup, dump, tempDir, unique, until } from './backup-restore-support.js';

/**
 * The live path run by the agents' runtimes as the migration will run it (docs/design.md section 5, "The
 * live path"): a single-member shoot created on one local seed, real sidecars reading the owner record
 * from the emulator's Route 53, and the destination's runtime walking the cluster to its own member in
 * `live-walk` rounds while the test writes the owner record between them as the garden does. A writer
 * that knows both seeds' addresses writes throughout.
 */

const runtimes: ControlPlaneRuntime[] = [];
afterAll(async () => {
  // The processes first: the temporary directories they write to go with `cleanup`.
  await Promise.all(runtimes.map((r) => r.stop()));
  await cleanup();
});

const { deployment, aws } = testGarden();
const internalDomain = deployment.outputs.InternalDomain;
const route53 = new Route53Client(aws);
const owners = new Route53OwnerRecords({ hostedZoneId: deployment.outputs.HostedZoneId, api: route53Api(route53) });
const s3 = new S3Client({ ...aws, forcePathStyle: true });

interface TestSeed {
  name: string;
  identity: string;
  bucket: string;
  runtime: ControlPlaneRuntime;
  hosting: LocalHosting;
  workDir: string;
  seal: (shoot: SeedCommand['shoot']) => ReturnType<ReturnType<typeof contractSecrets>['seal']>;
  open: ReturnType<typeof contractSecrets>['openSecrets'];
}

/** A seed with a new agent runtime; `again`: the same seed's agent started anew (its work dir and bucket kept). */
async function seed(label: string, again?: TestSeed): Promise<TestSeed> {
  const name = again?.name ?? unique(`lw${label}`);
  const identity = again?.identity ?? `${name}-${Date.now().toString(36)}`;
  const bucket = `gl-backup-${name}`;
  if (!again) await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const workDir = again?.workDir ?? tempDir(`live-agents-${label}`);
  const secrets = contractSecrets(name);
  const { hosting, runtime } = localRuntimeOnEmulator({
    deployment,
    seed: name,
    identity,
    workDir,
    s3,
    owners,
    openSecrets: secrets.openSecrets,
  });
  runtimes.push(runtime);
  return { name, identity, bucket, runtime, hosting, workDir, seal: secrets.seal, open: secrets.openSecrets };
}

const recordOf = (shoot: { name: string; project: string }) =>
  ownerRecordName({ shoot: shoot.name, project: shoot.project, internalDomain });

let serial = 0;
function command<T extends SeedCommand['type']>(
  to: TestSeed,
  shoot: SeedCommand['shoot'],
  type: T,
  fields: Record<string, unknown>,
): CommandOf<T> {
  serial += 1;
  return {
    apiVersion: COMMAND_API_VERSION,
    commandId: `live-agents/${serial}`,
    shoot,
    seed: to.name,
    issuedAt: new Date().toISOString(),
    type,
    ...fields,
  } as unknown as CommandOf<T>;
}

function logs(s: TestSeed): string {
  return readdirSync(s.workDir)
    .flatMap((id) =>
      readdirSync(join(s.workDir, id))
        .filter((f) => f.endsWith('.log'))
        .map(
          (f) =>
            `--- ${s.name}/${id}/${f} ---\n${readFileSync(join(s.workDir, id, f), 'utf8')
              .split('\n')
              .slice(-20)
              .join('\n')}`,
        ),
    )
    .join('\n');
}

/** A single-member shoot created on `a` under its own owner record: its etcd's address there once it serves. */
async function shootOn(a: TestSeed, label: string) {
  const shoot = { project: 'lwalk', name: unique(label), technicalID: '' };
  shoot.technicalID = `shoot--${shoot.project}--${shoot.name}`;
  const apiDomain = `api.${shoot.name}.${shoot.project}.live.gardenless.test`;
  await owners.set({ name: recordOf(shoot), value: a.identity });
  await a.runtime.execute(
    command(a, shoot, 'create-control-plane', {
      controlPlane: { hibernated: false, backup: { bucket: a.bucket } },
      secrets: await a.seal(shoot),
      apiDomain,
    }),
  );
  const sourceUrl = await until(
    'the source serves etcd',
    async () => (await a.runtime.controlPlanes()).find((p) => p.technicalID === shoot.technicalID)?.etcdClientUrl,
    { timeoutMs: 30_000, intervalMs: 200, explain: () => logs(a) },
  );
  return { shoot, apiDomain, sourceUrl };
}

/** The owner record's value while the cluster walks from `a` to `b`. */
const liveValue = (a: TestSeed, b: TestSeed, cluster: string) =>
  formatOwnerValue({ kind: 'live', origin: a.identity, destination: b.identity, cluster });

/** A `live-walk` round from `a` to the seed `to()` names now (its agent may restart), as the garden sends it. */
function walkRound(a: TestSeed, to: () => TestSeed, walk: Awaited<ReturnType<typeof shootOn>>) {
  return async (owner: string, fields: Record<string, unknown> = {}) =>
    to().runtime.execute(
      command(to(), walk.shoot, 'live-walk', {
        migrationId: `live-agents/${walk.shoot.name}`,
        timeoutSeconds: 120,
        source: { identity: a.identity, clientUrls: [walk.sourceUrl] },
        destination: { identity: to().identity },
        owner,
        backup: { bucket: to().bucket },
        secrets: await to().seal(walk.shoot),
        apiDomain: walk.apiDomain,
        ...fields,
      }),
    );
}

/** A `live-walk` round of a walk from `a` whose destination `b` is lost: sent to the source, as the garden sends it. */
function walkBackRound(a: TestSeed, b: TestSeed, walk: Awaited<ReturnType<typeof shootOn>>, spec: unknown) {
  return async (owner: string) =>
    a.runtime.execute(
      command(a, walk.shoot, 'live-walk', {
        migrationId: `live-agents/${walk.shoot.name}`,
        timeoutSeconds: 120,
        source: { identity: a.identity, clientUrls: [walk.sourceUrl] },
        destination: { identity: b.identity },
        owner,
        spec,
        lost: 'destination',
        backup: { bucket: a.bucket },
      }),
    );
}

describe("a live walk between two local seeds, in the agents' rounds", () => {
  it('moves a single-member shoot under writes, across a restart of the destination agent, keeping every write, revision and lease', async () => {
    const [a, first] = await Promise.all([seed('a'), seed('b')]);
    let b = first;
    const walk = await shootOn(a, 'w');
    const { shoot, apiDomain, sourceUrl } = walk;
    const destinationUrl = (await b.hosting.liveMember(shoot.technicalID)).clientUrl;
    const sourceLoadBalancer = (await a.runtime.controlPlanes()).find(
      (p) => p.technicalID === shoot.technicalID,
    )?.externalUrl;
    expect(sourceLoadBalancer).toBeDefined();

    const client = new Etcd3({ hosts: sourceUrl });
    const lease = client.lease(600, { autoKeepAlive: false });
    const leaseId = await lease.grant();
    await lease.put('leased/live').value('kept');
    client.close();
    const history = new HistoryRecorder();
    const writer = startClusterWriter({
      endpoints: () => [sourceUrl, destinationUrl],
      prefix: 'w/live-agents',
      writesPerSecond: 50,
      history,
      memberName: (i) => (i === 0 ? 'source' : 'destination'),
    });
    await new Promise((r) => setTimeout(r, 1_000));

    const round = walkRound(a, () => b, walk);
    const walkStart = performance.timeOrigin + performance.now();
    // The first round reads what the walk is of; nothing moves while the record names the source alone.
    const survey = await round(a.identity);
    expect(survey.next).toBe('own-both');
    expect(survey.taken).toEqual([]);
    expect(survey.spec.sourceMembers).toHaveLength(1);

    const live = liveValue(a, b, survey.spec.cluster);
    await owners.set({ name: recordOf(shoot), value: live });
    // As the garden does at own-live: the source's load balancer passes on what its own route no longer takes.
    const handOver = await a.runtime.execute(
      command(a, shoot, 'hand-over', {
        apiDomain,
        target: survey.loadBalancer,
        until: new Date(Date.now() + 300_000).toISOString(),
      }),
    );
    expect(handOver).toEqual({ handedOver: true });
    const walked = await round(live, { spec: survey.spec }).catch((e: unknown) => {
      throw new Error(`${String(e)}\n${logs(a)}\n${logs(b)}`);
    });
    expect(walked.next).toBe('own-destination');
    const member = (await b.hosting.liveMember(shoot.technicalID)).name;
    const source = survey.spec.sourceMembers[0]!.name;
    expect(walked.taken).toEqual([
      `add-learner ${member}`,
      `start ${member}`,
      `promote ${member}`,
      // The shoot's kube-apiserver follows before the leadership moves and the source's member leaves.
      `kube-apiserver on ${member}`,
      `move-leader ${member}`,
      `remove ${source}`,
    ]);
    // The walk went on only once the destination's load balancer forwards to its kube-apiserver: a client
    // handed over when the source's member left finds a route open.
    expect((await b.hosting.seedLoadBalancer())?.forwarding(shoot.technicalID)).toBe(true);
    // Until the record names it alone, the destination's plane is not reported active (nor its kube-apiserver's
    // probe, which is not the dependency watchdog's yet), and its controllers are held.
    const following = (await b.runtime.controlPlanes()).find((p) => p.technicalID === shoot.technicalID);
    expect(following).toMatchObject({ active: false, externalUrl: survey.loadBalancer });
    expect(following?.internalProbe).toBeUndefined();
    expect((await b.hosting.apiServer(shoot.technicalID)).internalProbe).toBe('Success');
    expect(b.hosting.componentProcess(shoot.technicalID, 'kube-controller-manager')?.running).toBe(false);
    // A client that reaches the source's load balancer (a resolver's answer from before) is served at once:
    // the source's member left, so its own route takes nothing, and the connection is passed on.
    await until(
      'the source stops forwarding',
      async () => !(await a.hosting.seedLoadBalancer())?.forwarding(shoot.technicalID),
      {
        timeoutMs: 10_000,
        intervalMs: 100,
      },
    );
    // The source's member applied its removal and stays down: its sidecar does not start it again.
    const sourceLog = () => readFileSync(join(a.workDir, shoot.technicalID, 'sidecar.log'), 'utf8');
    // etcd learns of its own removal from the conf change it applies or from a peer's answer to its next
    // message, which takes a TLS handshake on a loaded machine: seconds, not a fixed bound.
    await until('the source member removed', () => sourceLog().includes('"event":"etcd-removed"'), {
      timeoutMs: 60_000,
      intervalMs: 200,
      explain: () => logs(a),
    });
    const ca = (await b.open(await b.seal(shoot), shoot)).clusterCA.certificate;
    expect((await httpsGet(`${sourceLoadBalancer}/readyz`, { servername: apiDomain, ca })).status).toBe(200);
    const afterRemoval = sourceLog().slice(sourceLog().indexOf('"event":"etcd-removed"'));
    expect(afterRemoval).not.toMatch(/"event":"etcd-(started|exited-unexpectedly|restart-failed)"/);
    // The destination's agent restarts mid-walk, its member stopped with it: the next round starts it again.
    await b.runtime.stop();
    b = await seed('b', b);

    await owners.set({ name: recordOf(shoot), value: b.identity });
    const finished = await round(b.identity, { spec: survey.spec });
    expect(finished).toMatchObject({ next: 'retire-source', taken: [] });
    const walkEnd = performance.timeOrigin + performance.now();
    const reported = (await b.runtime.controlPlanes()).find((p) => p.technicalID === shoot.technicalID);
    expect(reported?.active, JSON.stringify(reported)).toBe(true);
    expect(reported?.internalProbe).toBe('Success');
    // The source's leftovers go as after any migration; its backups stay.
    await expect(
      a.runtime.execute(command(a, shoot, 'delete-control-plane', { keepBackups: true, keepExternalResources: true })),
    ).resolves.toMatchObject({ deleted: true });

    await new Promise((r) => setTimeout(r, 1_000));
    const record = await writer.stop();
    const gap = longestGap(record.acknowledged, walkStart, walkEnd);
    console.log(
      `live walk by the agents: ${Math.round(walkEnd - walkStart)} ms, longest write gap ${Math.round(gap.ms)} ms, ${record.acknowledged.length} writes acknowledged, ${record.failed} not`,
    );
    // One cluster: the destination's member is the source's cluster, not a copy of it.
    expect(clusterIdHex((await memberList(destinationUrl)).clusterId)).toBe(survey.spec.cluster);
    const content = await dump(destinationUrl);
    const missing = record.acknowledged.filter((w) => content.get(w.key)?.modRevision !== w.revision);
    expect(missing.slice(0, 5), `${missing.length} acknowledged writes missing or at another revision`).toEqual([]);
    expect(record.acknowledged.length).toBeGreaterThan(100);
    await recordFinalReads({ history, seed: 'destination', endpoint: destinationUrl });
    const verdict = await checkHistory('live-agents', history);
    expect(verdict.result, JSON.stringify(verdict)).toBe('linearizable');
    const kept = await leaseTimeToLive(destinationUrl, leaseId, { keys: true });
    expect(kept?.keys.map((k) => Buffer.from(k, 'base64').toString())).toEqual(['leased/live']);
  }, 240_000);

  it('a source lost before the destination joined: the round gives up as LiveWalkPeerLost, and told the source is lost, wipes its plane and answers the bad path', async () => {
    const [a, b] = await Promise.all([seed('c'), seed('d')]);
    const walk = await shootOn(a, 'x');
    const { shoot } = walk;
    const round = walkRound(a, () => b, walk);
    const survey = await round(a.identity);
    const member = (await b.hosting.liveMember(shoot.technicalID)).name;
    const live = liveValue(a, b, survey.spec.cluster);
    await owners.set({ name: recordOf(shoot), value: live });
    // The source's etcd goes before the walk could add anything: no member answers the destination.
    await a.hosting.stopAll();

    const t0 = performance.now();
    const stalled = await round(live, { spec: survey.spec }).then(
      () => undefined,
      (e: unknown) => e,
    );
    const gaveUpMs = performance.now() - t0;
    expect(stalled).toMatchObject({ failure: 'LiveWalkPeerLost' });
    // After the silence it allows (10 s), not after the round's own timeout (115 s).
    expect(gaveUpMs).toBeLessThan(60_000);
    const out = await round(live, { spec: survey.spec, lost: 'source' });

    expect(out).toMatchObject({ next: 'bad-path', wayOut: 'bad-path' });
    expect(out.taken).toEqual([`wipe ${member}`]);
    expect(existsSync(join(b.workDir, shoot.technicalID))).toBe(false);
    // Nothing of the walk is left on the destination: the bad path's restore starts the plane afresh.
    expect((await b.runtime.controlPlanes()).find((p) => p.technicalID === shoot.technicalID)).toBeUndefined();
    expect(b.hosting.sidecars(shoot.technicalID)).toEqual([]);
  }, 240_000);

  it("a destination lost while it learns: the source's rounds answer abort-to-source and, once the record names the source, remove its learner; the source serves on", async () => {
    // Prepare: the destination's member added as a learner, its process never running.
    const [a, b] = await Promise.all([seed('e'), seed('f')]);
    const walk = await shootOn(a, 'y');
    const { shoot, sourceUrl } = walk;
    const survey = await walkRound(a, () => b, walk)(a.identity);
    const live = liveValue(a, b, survey.spec.cluster);
    await owners.set({ name: recordOf(shoot), value: live });
    const client = new Etcd3({ hosts: sourceUrl });
    const before = await client.put('kept/before').value('1').exec();
    const learner = await b.hosting.liveMember(shoot.technicalID);
    await memberAdd(sourceUrl, { peerUrl: learner.peerUrl, learner: true });
    const back = walkBackRound(a, b, walk, survey.spec);

    // Act
    const decided = await back(live);
    await owners.set({ name: recordOf(shoot), value: a.identity });
    const done = await back(a.identity);
    const again = await back(a.identity);

    // Assess
    expect(decided).toMatchObject({ next: 'own-source', wayOut: 'abort-to-source', taken: [] });
    expect(done).toMatchObject({ next: 'done', wayOut: 'abort-to-source' });
    expect(done.taken).toHaveLength(1);
    expect(done.taken[0]).toMatch(/^remove /);
    // A retried round finds nothing left to do.
    expect(again).toMatchObject({ next: 'done', taken: [] });
    const listed = await memberList(sourceUrl);
    expect(listed.members.map((m) => m.peerUrls)).toEqual([[survey.spec.sourceMembers[0]!.peerUrl]]);
    expect(clusterIdHex(listed.clusterId)).toBe(survey.spec.cluster);
    await until(
      'the source takes writes',
      () =>
        client
          .put('kept/after')
          .value('2')
          .then(
            () => true,
            () => false,
          ),
      {
        timeoutMs: 20_000,
        intervalMs: 200,
      },
    );
    const kept = await dump(sourceUrl);
    expect(kept.get('kept/before')?.modRevision).toBe(Number(before.header.revision));
    client.close();
  }, 240_000);

  it('a destination lost while both vote: the source, without a quorum, is forced into a cluster of its own once the record names it, keeping every acknowledged write', async () => {
    // Prepare: the walk runs until the destination's member votes beside the source's, then its seed goes.
    const [a, b] = await Promise.all([seed('g'), seed('h')]);
    const walk = await shootOn(a, 'z');
    const { shoot, sourceUrl } = walk;
    const round = walkRound(a, () => b, walk);
    const survey = await round(a.identity);
    const live = liveValue(a, b, survey.spec.cluster);
    await owners.set({ name: recordOf(shoot), value: live });
    const history = new HistoryRecorder();
    const writer = startClusterWriter({
      endpoints: () => [sourceUrl],
      prefix: 'w/walk-back',
      writesPerSecond: 50,
      history,
      memberName: () => 'source',
    });
    const destinationPeer = (await b.hosting.liveMember(shoot.technicalID)).peerUrl;
    // The round follows with the destination's kube-apiserver before the leadership moves: the moment to lose it.
    void round(live, { spec: survey.spec }).catch(() => undefined);
    await until(
      "the destination's member votes",
      async () =>
        (await memberList(sourceUrl).catch(() => undefined))?.members.some(
          (m) => m.peerUrls.includes(destinationPeer) && m.name !== '' && !m.isLearner,
        ),
      { timeoutMs: 60_000, intervalMs: 50, explain: () => logs(b) },
    );
    await b.hosting.stopAll();
    const back = walkBackRound(a, b, walk, survey.spec);

    // Act
    const decided = await back(live);
    await owners.set({ name: recordOf(shoot), value: a.identity });
    const done = await back(a.identity).catch((e: unknown) => {
      throw new Error(`${String(e)}\n${logs(a)}`);
    });
    const forcedAt = Date.now();
    await until(
      'the source takes writes again',
      async () => writer.record().acknowledged.some((w) => w.at >= forcedAt),
      { timeoutMs: 30_000, intervalMs: 200, explain: () => logs(a) },
    );
    const record = await writer.stop();

    // Assess
    expect(decided).toMatchObject({ next: 'own-source', wayOut: 'force', taken: [] });
    expect(done).toMatchObject({
      next: 'done',
      wayOut: 'force',
      taken: [`force ${survey.spec.sourceMembers[0]!.name}`],
    });
    const listed = await memberList(sourceUrl);
    expect(listed.members).toHaveLength(1);
    // The same cluster, not a copy: the forced member keeps its cluster ID and data.
    expect(clusterIdHex(listed.clusterId)).toBe(survey.spec.cluster);
    const content = await dump(sourceUrl);
    const missing = record.acknowledged.filter((w) => content.get(w.key)?.modRevision !== w.revision);
    expect(missing.slice(0, 5), `${missing.length} acknowledged writes missing or at another revision`).toEqual([]);
    await recordFinalReads({ history, seed: 'source', endpoint: sourceUrl });
    const verdict = await checkHistory('walk-back', history);
    expect(verdict.result, JSON.stringify(verdict)).toBe('linearizable');
  }, 300_000);
});
