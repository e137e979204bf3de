import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { currentFinalSnapshot, snapshotChain } from '../../core/snapshots/index.js';
import { range } from '../../seed/backup-restore/etcd-gateway.js';
import { sleep } from '../../seed/backup-restore/index.js';
import {
  ControlledOwnerLookup,
  startInProcessCluster,
  type InProcessCluster,
  type InProcessClusterOptions,
  type InProcessMember,
} from '../../harness/cluster/in-process-cluster.js';
import {
  checkHistory,
  HistoryRecorder,
  longestGap,
  readEtcdContent,
  recordFinalReads,
  startClusterWriter,
  startRegisterClients,
  type ClusterAck,
  type ClusterWriter,
  type ClusterWriterRecord,
  type RegisterClients,
} from '../../harness/scenario/index.js';
import { cleanup, newBucket, restoredContent, unique, until } from './backup-restore-support.js';

/**
 * A `node` or `zone` shoot's etcd as three real etcd processes, each with its own backup-restore sidecar
 * (in this process), the snapshots in the emulator's S3, and a writer of ~100 writes a second that
 * balances over the members as etcd's clients do. Member failures, a zone outage, the snapshot leader's
 * death, the cluster's fence on an owner change, and a restore into three members.
 *
 * Every test also records a history of client operations for the linearizability checker (Porcupine),
 * as the migration scenarios do: the writer's puts, six register clients putting and reading six shared
 * keys (two going to each member first, each falling over to the others), and a final read of every
 * key (through a member, or for the fence from the final snapshot). Every one of these contracts
 * promises no loss, so each history must be linearizable as recorded.
 */

const ME = 'seed-ha-1111';
const OTHER = 'seed-ha-2222';
const SIDECAR = {
  ownerCheckInterval: 500,
  unknownGrace: 5_000,
  deltaSnapshotInterval: 1_000,
  fullSnapshotInterval: 600_000,
};
const CLUSTER = { leaderCheckInterval: 250, memberFenceTimeout: 3_000 };
const epochNow = () => performance.timeOrigin + performance.now();

afterAll(cleanup);

const running: { cluster?: InProcessCluster; traffic?: Traffic }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.traffic?.stop();
    await r.cluster?.stop();
  }
});

interface Traffic {
  readonly history: HistoryRecorder;
  readonly writer: ClusterWriter;
  readonly registers: RegisterClients;
  /** Stops the writer and the register clients together; the writer's record. */
  stop(): Promise<ClusterWriterRecord>;
}

/**
 * The clients of a cluster, recording one history, each given every member's address as etcd's clients
 * are: the writer (~100 writes a second, each to the next member) and six register clients, two going
 * to each member first, at 7 operations a second each, most of them reads. A timeout or a reset is of
 * unknown outcome, a refused connection a failure.
 */
function startTraffic(cluster: InProcessCluster, label: string): Traffic {
  const history = new HistoryRecorder();
  const names = cluster.members.map((m) => m.spec.name);
  const writer = startClusterWriter({
    endpoints: () => cluster.clientUrls,
    prefix: `w/${label}`,
    writesPerSecond: 100,
    history,
    memberName: (i) => names[i]!,
  });
  const registers = startRegisterClients({
    history,
    endpoints: Object.fromEntries(names.map((name, i) => [name, cluster.clientUrls[i]!])),
    clients: [...names, ...names],
    keys: ['k0', 'k1', 'k2', 'k3', 'k4', 'k5'].map((k) => `w/${label}-registers/${k}`),
    opsPerSecond: 7,
    readShare: 0.6,
    timeoutMs: 500,
  });
  return {
    history,
    writer,
    registers,
    async stop() {
      const [record] = await Promise.all([writer.stop(), registers.stop()]);
      return record;
    },
  };
}

/**
 * Records the final reads of every key of the history (one range read), runs the linearizability
 * checker over it (the verdict is printed; the history, and the visualization when it fails, stay in
 * test-results/linearizability/) and asserts it is linearizable.
 */
async function assertLinearizable(
  name: string,
  history: HistoryRecorder,
  finalRead: Omit<Parameters<typeof recordFinalReads>[0], 'history'>,
): Promise<void> {
  await recordFinalReads({ history, ...finalRead });
  const verdict = await checkHistory(name, history);
  expect(verdict.result, JSON.stringify(verdict)).toBe('linearizable');
}

async function serving(
  options: Partial<Omit<InProcessClusterOptions, 'store'>> & { label: string; lookup?: ControlledOwnerLookup },
) {
  const store = await newBucket(options.label);
  const technicalID = options.technicalID ?? unique(`shoot--ha--${options.label}`);
  const lookup = options.lookup ?? new ControlledOwnerLookup(ME);
  const cluster = await startInProcessCluster({
    technicalID,
    store,
    identity: ME,
    lookups: [lookup],
    sidecar: SIDECAR,
    cluster: CLUSTER,
    ...options,
  });
  const entry: (typeof running)[number] = { cluster };
  running.push(entry);
  await until('every member serving', async () => cluster.members.every((m) => m.sidecar.readiness() === 200), {
    timeoutMs: 60_000,
  });
  const traffic = startTraffic(cluster, options.label);
  entry.traffic = traffic;
  // A new cluster's members report ready before it commits (it may still be electing its first leader):
  // the failure comes once the cluster acknowledged writes for 2 s, so that every history has a before.
  await until('the cluster to acknowledge writes', async () => traffic.writer.record().acknowledged.length > 0, {
    timeoutMs: 30_000,
  });
  await sleep(2_000);
  return { store, technicalID, lookup, cluster, traffic, writer: traffic.writer, history: traffic.history };
}

/** Every acknowledged write is in the cluster with its value, read through each member that serves. */
async function assertNothingLost(
  cluster: InProcessCluster,
  acks: readonly ClusterAck[],
  prefix: string,
): Promise<void> {
  for (const url of cluster.clientUrls) {
    // A member revived a moment ago may still be starting (its sidecar serves clients once its owner
    // check passed): read it once it answers.
    let content: Map<string, string> | undefined;
    await until(
      `member ${url} to answer a read`,
      async () => {
        content = await readEtcdContent({ clientUrl: url, prefix: `${prefix}/` }).catch(() => undefined);
        return content !== undefined;
      },
      { timeoutMs: 30_000 },
    );
    const lost = acks.filter((a) => content!.get(a.key) !== a.value);
    expect(
      lost.map((a) => a.key),
      `lost on ${url}`,
    ).toEqual([]);
  }
}

/** The revision this member's own data reaches (serializable read: no quorum asked). */
async function ownRevision(member: InProcessMember): Promise<number> {
  const { header } = await range(member.sidecar.supervisor.endpoint(), { key: '\0', serializable: true }, 2_000);
  return Number(header.revision ?? 0);
}

function followers(cluster: InProcessCluster, leader: InProcessMember | undefined): InProcessMember[] {
  return cluster.members.filter((m) => m !== leader);
}

function figures(name: string, values: Record<string, unknown>): void {
  console.log(`${name}: ${JSON.stringify(values)}`);
}

describe('three-member etcd of an HA shoot (real etcd processes, one sidecar each)', () => {
  it('one member killed under writes: the cluster keeps acknowledging, the member is restarted and catches up, nothing acknowledged is lost', async () => {
    const { cluster, traffic, history } = await serving({ label: 'kill1' });
    const victim = followers(cluster, await cluster.leader())[0]!;
    const pid = victim.sidecar.supervisor.pid!;
    const killedAt = epochNow();
    process.kill(pid, 'SIGKILL');
    history.annotate(`${victim.spec.name} killed`, killedAt);
    await until(
      'the member restarted by its sidecar',
      async () => victim.sidecar.supervisor.pid !== undefined && victim.sidecar.supervisor.pid !== pid,
      { timeoutMs: 15_000 },
    );
    history.annotate(`${victim.spec.name} restarted`);
    await sleep(3_000);
    const record = await traffic.stop();

    const during = record.acknowledged.filter((a) => a.at >= killedAt && a.at <= killedAt + 3_000);
    expect(during.length, 'acknowledged writes in the 3 s after the kill').toBeGreaterThanOrEqual(150);
    const gap = longestGap(record.acknowledged, killedAt, killedAt + 3_000);
    const last = record.acknowledged.at(-1)!;
    await until('the restarted member to catch up', async () => (await ownRevision(victim)) >= last.revision, {
      timeoutMs: 15_000,
    });
    await assertNothingLost(cluster, record.acknowledged, record.prefix);
    // Read back through the member that rejoined.
    await assertLinearizable('ha-kill-one-member', history, {
      seed: victim.spec.name,
      endpoint: victim.spec.clientUrl,
    });
    figures('kill one member', {
      acknowledged: record.acknowledged.length,
      failed: record.failed,
      longestGapMs: Math.round(gap.ms),
      ackPerSecondAfterKill: during.length / 3,
    });
  }, 120_000);

  it('two members down: writes are refused; once they return nothing acknowledged is lost', async () => {
    const { cluster, writer, traffic, history } = await serving({ label: 'kill2' });
    const [a, b] = followers(cluster, await cluster.leader());
    const downAt = epochNow();
    await Promise.all([cluster.crash(a!), cluster.crash(b!)]);
    const crashedAt = epochNow();
    history.annotate(`${a!.spec.name} and ${b!.spec.name} down`, downAt, crashedAt);
    await sleep(4_000);
    const before = writer.record();
    // The leader steps down within its election timeouts (check-quorum); nothing commits without a quorum.
    const acceptedWhileDown = before.acknowledged.filter((w) => w.sentAt > crashedAt + 2_000);
    expect(acceptedWhileDown).toEqual([]);
    expect(before.failed).toBeGreaterThan(0);
    // In the history too: no put or read answered, and the puts sent to the member left are of unknown
    // outcome (timed out: it may have appended them, and they may commit once the others return).
    const whileDown = history.operations().filter((o) => o.invokedAt > crashedAt + 2_000);
    expect(whileDown.filter((o) => o.outcome === 'ok')).toEqual([]);
    expect(whileDown.some((o) => o.op === 'put' && o.outcome === 'unknown')).toBe(true);
    const revivedAt = epochNow();
    await Promise.all([cluster.revive(a!), cluster.revive(b!)]);
    history.annotate(`${a!.spec.name} and ${b!.spec.name} revived`, revivedAt, epochNow());
    await until('writes acknowledged again', async () => writer.record().acknowledged.some((w) => w.at > revivedAt), {
      timeoutMs: 30_000,
    });
    await sleep(1_000);
    const record = await traffic.stop();
    await assertNothingLost(cluster, record.acknowledged, record.prefix);
    // The checker lets an unknown put take effect later (when the members return) or never.
    await assertLinearizable('ha-two-members-down', history, { seed: a!.spec.name, endpoint: a!.spec.clientUrl });
    const firstAfter = record.acknowledged.find((w) => w.at > revivedAt)!;
    figures('two members down', {
      acknowledged: record.acknowledged.length,
      failed: record.failed,
      lastAckAfterDownMs: Math.round((before.acknowledged.at(-1)?.at ?? downAt) - downAt),
      reviveToFirstAckMs: Math.round(firstAfter.at - revivedAt),
    });
  }, 120_000);

  it('the leader killed: a new leader is elected, its sidecar continues the snapshots with no revision gap and no duplicate', async () => {
    const { cluster, traffic, history, store, technicalID } = await serving({ label: 'leader' });
    await until(
      'a delta snapshot of the first leader',
      async () => (await store.list(technicalID)).some((s) => s.kind === 'Incr'),
      { timeoutMs: 15_000 },
    );
    const leader = (await cluster.leader())!;
    const killedAt = epochNow();
    // Kept down (its machine gone) so that the next leader is another member.
    await cluster.crash(leader);
    history.annotate(`leader ${leader.spec.name} killed`, killedAt);
    const lastBefore = Math.max(...(await store.list(technicalID)).map((s) => s.lastRevision));
    await until('a new leader', async () => (await cluster.leader()) !== undefined, { timeoutMs: 15_000 });
    const next = (await cluster.leader())!;
    // The new leader waits its handover delay (3 s), then continues from where the store ends.
    await until('snapshots from the new leader', async () => next.log.some((e) => e.event === 'snapshot'), {
      timeoutMs: 20_000,
    });
    await sleep(2_500);
    const record = await traffic.stop();
    await sleep(1_500);
    await cluster.revive(leader);

    const listing = await store.list(technicalID);
    const chain = snapshotChain(listing);
    expect(chain.gaps).toEqual([]);
    expect(chain.overlaps).toEqual([]);
    expect(chain.lastRevision).toBeGreaterThan(lastBefore);
    expect(next.log.some((e) => e.event === 'resumed')).toBe(true);
    // Only one full snapshot: the new leader continued with deltas.
    expect(listing.filter((s) => s.kind === 'Full')).toHaveLength(1);
    const gap = longestGap(record.acknowledged, killedAt, killedAt + 5_000);
    const firstAfter = record.acknowledged.find((w) => w.sentAt > killedAt)!;
    await until('the old leader serving again', async () => leader.sidecar.readiness() === 200, { timeoutMs: 30_000 });
    await assertNothingLost(cluster, record.acknowledged, record.prefix);
    await assertLinearizable('ha-leader-killed', history, { seed: leader.spec.name, endpoint: leader.spec.clientUrl });
    figures('leader killed', {
      longestGapMs: Math.round(gap.ms),
      killToFirstAckMs: Math.round(firstAfter.at - killedAt),
      snapshots: listing.length,
      chainLastRevision: chain.lastRevision,
    });
  }, 120_000);

  it('zone outage of a `zone` shoot (one member per zone): every member of the zone gone, writes continue', async () => {
    const { cluster, traffic, history } = await serving({
      label: 'zone',
      zones: ['eu-west-1a', 'eu-west-1b', 'eu-west-1c'],
    });
    expect(cluster.members.map((m) => m.spec.zone)).toEqual(['eu-west-1a', 'eu-west-1b', 'eu-west-1c']);
    const leader = await cluster.leader();
    // The leader's zone: the worst one to lose.
    const zone = leader!.spec.zone!;
    const outAt = epochNow();
    await Promise.all(cluster.members.filter((m) => m.spec.zone === zone).map((m) => cluster.crash(m)));
    history.annotate(`zone ${zone} out`, outAt);
    // On a loaded machine the election and the writer's move to members that answer take longer than on
    // a quiet one: wait for the writes the outage must not stop, rather than for a fixed time.
    const sentInOutage = (acks: readonly ClusterAck[]) => acks.filter((w) => w.sentAt > outAt);
    await until(
      '100 writes acknowledged in the outage',
      async () => sentInOutage(traffic.writer.record().acknowledged).length >= 100,
      { timeoutMs: 30_000 },
    );
    const record = await traffic.stop();
    const after = sentInOutage(record.acknowledged);
    const stoppedAt = after.at(-1)!.at;
    const gap = longestGap(record.acknowledged, outAt, stoppedAt);
    // One election (500 ms timeout here, a few rounds at worst) and a 500 ms request deadline per dead
    // member: writes that stop for longer than 10 s did not continue through the outage.
    expect(gap.ms).toBeLessThan(10_000);
    const electedAt = gap.after + gap.ms;
    const survivor = cluster.members.find((m) => m.spec.zone !== zone)!;
    const content = await readEtcdContent({ clientUrl: survivor.spec.clientUrl, prefix: `${record.prefix}/` });
    expect(record.acknowledged.filter((a) => content.get(a.key) !== a.value)).toEqual([]);
    await assertLinearizable('ha-zone-outage', history, {
      seed: survivor.spec.name,
      endpoint: survivor.spec.clientUrl,
    });
    figures('zone outage', {
      zone,
      acknowledged: record.acknowledged.length,
      longestGapMs: Math.round(gap.ms),
      ackPerSecondAfterElection: Math.round(
        (after.filter((w) => w.at > electedAt).length / Math.max(1, stoppedAt - electedAt)) * 1_000,
      ),
    });
  }, 120_000);

  it('owner change: the cluster fences as a unit; no member acknowledges after the final snapshot began, and it holds every acknowledged write', async () => {
    const { cluster, traffic, history, store, technicalID, lookup } = await serving({ label: 'fence' });
    const changedAt = epochNow();
    lookup.value = OTHER;
    history.annotate('owner changed', changedAt);
    await until(
      'the final snapshot',
      async () => cluster.members.some((m) => m.sidecar.status().owner.finalSnapshot === 'taken'),
      { timeoutMs: 60_000 },
    );
    await sleep(1_000);
    const record = await traffic.stop();

    for (const m of cluster.members) {
      const status = m.sidecar.status();
      expect(status.owner.mode, m.spec.name).toBe('lost');
      expect(status.etcd.fenced, m.spec.name).toBe(true);
      expect(m.sidecar.readiness()).toBe(503);
    }
    const final = currentFinalSnapshot(await store.list(technicalID))!;
    expect(final).toBeDefined();
    const maxAcked = Math.max(...record.acknowledged.map((w) => w.revision));
    expect(final.lastRevision).toBeGreaterThanOrEqual(maxAcked);
    // The fenced cluster serves no reads: the history's final reads are of the final snapshot, restored.
    // Read after the fence, they must show the registers as the last acknowledged writes left them.
    let kvs = new Map<string, { value: string }>();
    await assertLinearizable('ha-cluster-fence', history, {
      seed: 'final snapshot',
      endpoint: store.bucket,
      range: async () => {
        ({ kvs } = await restoredContent({ store, technicalID, expectedLastRevision: final.lastRevision }));
        return new Map([...kvs].map(([key, kv]) => [key, kv.value]));
      },
    });
    const missing = record.acknowledged.filter((w) => kvs.get(w.key)?.value !== w.value);
    expect(missing.map((w) => w.key)).toEqual([]);
    const lastAck = record.acknowledged.at(-1)!;
    figures('cluster fence', {
      acknowledged: record.acknowledged.length,
      failed: record.failed,
      ownerChangeToLastAckMs: Math.round(lastAck.at - changedAt),
      finalRevision: final.lastRevision,
      maxAcked,
    });
  }, 120_000);

  it('restore into three members: the same data and revision on each, then it serves', async () => {
    const { cluster, traffic, history, store, technicalID } = await serving({ label: 'restore' });
    await sleep(1_500);
    const record = await traffic.stop();
    // The register clients' last puts may follow the writer's: wait for the cluster's revision, not only the writer's.
    const { header } = await range(cluster.members[0]!.sidecar.supervisor.endpoint(), { key: '\0' }, 2_000);
    const lastRevision = Math.max(Number(header.revision ?? 0), record.acknowledged.at(-1)!.revision);
    await until(
      'a delta snapshot with the last write',
      async () => Math.max(...(await store.list(technicalID)).map((s) => s.lastRevision)) >= lastRevision,
      { timeoutMs: 15_000 },
    );
    await cluster.stop();
    running.length = 0;

    const restored = await startInProcessCluster({
      technicalID,
      store,
      identity: ME,
      lookups: [new ControlledOwnerLookup(ME)],
      sidecar: SIDECAR,
      cluster: CLUSTER,
      restore: {},
    });
    running.push({ cluster: restored });
    const revisions = restored.members.map((m) => m.sidecar.status().restore?.revision);
    expect(new Set(revisions).size, JSON.stringify(revisions)).toBe(1);
    expect(revisions[0]).toBeGreaterThanOrEqual(record.acknowledged.at(-1)!.revision);
    await until(
      'every restored member serving',
      async () => restored.members.every((m) => m.sidecar.readiness() === 200),
      { timeoutMs: 60_000 },
    );
    await assertNothingLost(restored, record.acknowledged, record.prefix);
    await assertLinearizable('ha-restore', history, {
      seed: `restored ${restored.members[0]!.spec.name}`,
      endpoint: restored.members[0]!.spec.clientUrl,
    });
    for (const m of restored.members) expect(await ownRevision(m)).toBeGreaterThanOrEqual(revisions[0]!);
    figures('restore into three members', {
      revision: revisions[0],
      timings: restored.members.map((m) => m.sidecar.status().restore?.timings),
    });
  }, 120_000);
});
