import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { liveWayOut, type LiveWalkStep } from '../../core/migration/live-walk.js';
import { ownerValueAdmits } from '../../core/ownership/owner-value.js';
import { observeLiveWalk, takeWayOut, walkLive } from '../../seed/backup-restore/cluster/live-walk.js';
import { clusterIdHex, leaseTimeToLive, memberList, memberStatus } from '../../seed/backup-restore/etcd-gateway.js';
import { startLiveWalkLandscape, type LiveWalkLandscape } from '../../harness/cluster/live-walk-landscape.js';
import {
  checkHistory,
  HistoryRecorder,
  longestGap,
  recordFinalReads,
  startClusterWriter,
  type ClusterWriterRecord,
} from '../../harness/scenario/index.js';
import { cleanup, dump, tempDir, unique, until } from './backup-restore-support.js';

/**
 * The live path's walk (docs/design.md section 5, "The live path") on real etcd processes: the source's
 * members and the destination's on loopback, a writer of ~100 writes a second that knows every planned
 * member's address (as the shoot's kube-apiserver will be given them), a history for Porcupine. The walk
 * moves the cluster itself, so every key keeps its revision and its lease: nothing is copied.
 */

const SOURCE = 'seed-live-src-1';
const DESTINATION = 'seed-live-dst-2';

afterAll(cleanup);
const running: LiveWalkLandscape[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((l) => l.stop()));
});

async function landscape(label: string, sources: number, destinations: number): Promise<LiveWalkLandscape> {
  const l = await startLiveWalkLandscape({
    dir: tempDir(`live-${label}`),
    token: unique('live'),
    sources,
    destinations,
    identities: { source: SOURCE, destination: DESTINATION },
  });
  running.push(l);
  return l;
}

/** A writer over every planned member and a lease-bound key written before the walk. */
async function traffic(l: LiveWalkLandscape, label: string) {
  const history = new HistoryRecorder();
  const urls = l.plan.map((m) => m.clientUrl);
  const client = new Etcd3({ hosts: urls[0]! });
  const lease = client.lease(600, { autoKeepAlive: false });
  const leaseId = await lease.grant();
  await lease.put(`leased/${label}`).value('kept');
  client.close();
  const writer = startClusterWriter({
    endpoints: () => urls,
    prefix: `w/${label}`,
    writesPerSecond: 100,
    history,
    memberName: (i) => l.plan[i]!.name,
  });
  return { history, writer, leaseId };
}

/** Every acknowledged write on `clientUrl` at its revision; the history linearizable; the leased key kept. */
async function assertNothingLost(
  name: string,
  clientUrl: string,
  record: ClusterWriterRecord,
  t: Awaited<ReturnType<typeof traffic>>,
) {
  const content = await dump(clientUrl);
  const missing = record.acknowledged.filter((a) => content.get(a.key)?.modRevision !== a.revision);
  expect(missing.slice(0, 5), `${missing.length} acknowledged writes missing or at another revision`).toEqual([]);
  expect(record.acknowledged.length).toBeGreaterThan(100);
  await recordFinalReads({ history: t.history, seed: 'destination', endpoint: clientUrl });
  const verdict = await checkHistory(name, t.history);
  expect(verdict.result, JSON.stringify(verdict)).toBe('linearizable');
  const lease = await leaseTimeToLive(clientUrl, t.leaseId, { keys: true });
  expect(lease?.keys.map((k) => Buffer.from(k, 'base64').toString())).toEqual([`leased/${name}`]);
  expect(lease!.remainingTtl).toBeGreaterThan(500);
}

describe('the live walk on real etcd', () => {
  it.each([
    [1, 1],
    [3, 3],
  ])(
    'walks %i member(s) to %i under writes, keeping every write, revision and lease',
    async (from, to) => {
      const label = `walk-${from}-${to}`;
      const l = await landscape(label, from, to);
      const t = await traffic(l, label);
      await new Promise((r) => setTimeout(r, 1_000));
      const steps: LiveWalkStep[] = [];
      const clusterIds = new Set<string>();
      const walkStart = performance.timeOrigin + performance.now();
      await walkLive({
        spec: l.spec,
        members: l.plan,
        host: l.host,
        timeoutMs: 60_000,
        onStep: (step, observed) => {
          steps.push(step);
          expect(observed.members.filter((m) => m.learner).length).toBeLessThanOrEqual(1);
        },
      });
      const walkEnd = performance.timeOrigin + performance.now();
      for (const m of l.plan.filter((p) => p.side === 'destination'))
        clusterIds.add((await memberList(m.clientUrl)).clusterId);
      await new Promise((r) => setTimeout(r, 1_000));
      const record = await t.writer.stop();
      const gap = longestGap(record.acknowledged, walkStart, walkEnd);
      console.log(
        `live walk ${from} -> ${to}: ${steps.length} steps in ${Math.round(walkEnd - walkStart)} ms, longest write gap ${Math.round(gap.ms)} ms, ${record.acknowledged.length} writes acknowledged`,
      );
      // One cluster throughout: the destination's members are the source's cluster, not a copy of it.
      expect([...clusterIds].map(clusterIdHex)).toEqual([l.spec.cluster]);
      expect(l.host.owner).toEqual({ kind: 'seed', seed: DESTINATION });
      const destination = l.plan.filter((m) => m.side === 'destination');
      const final = await memberList(destination[0]!.clientUrl);
      expect(final.members.map((m) => m.name).sort()).toEqual(destination.map((m) => m.name));
      expect(final.members.every((m) => !m.isLearner)).toBe(true);
      for (const m of l.plan.filter((p) => p.side === 'source')) expect(l.running.get(m.name)?.running).toBe(false);
      await assertNothingLost(label, destination[0]!.clientUrl, record, t);
    },
    120_000,
  );

  it('a source killed while both seeds vote: the destination is forced alone and keeps every write', async () => {
    const label = 'force-destination';
    const l = await landscape(label, 1, 1);
    const t = await traffic(l, label);
    await walkLive({ spec: l.spec, members: l.plan, host: l.host, timeoutMs: 30_000, stopBefore: ['move-leader'] });
    // Both voters now; the source dies with the writer going.
    await new Promise((r) => setTimeout(r, 500));
    await l.running.get('s0')!.stop({ timeoutMs: 1 });
    const observed = await observeLiveWalk({ members: l.plan, host: l.host });
    const out = liveWayOut(l.spec, observed, { source: false, destination: true });
    expect(out).toEqual({ kind: 'force', side: 'destination', member: 'd0' });
    await takeWayOut(out, observed, { spec: l.spec, members: l.plan, host: l.host });
    expect(ownerValueAdmits(l.host.owner, { identity: SOURCE, cluster: l.spec.cluster })).toBe('not-owner');
    const d0 = l.plan.find((m) => m.name === 'd0')!;
    await until(
      'the forced member leads',
      async () => {
        const status = await memberStatus(d0.clientUrl, 500).catch(() => undefined);
        return status !== undefined && status.leader === status.memberId;
      },
      { logTail: join(l.dir, 'd0.log') },
    );
    await new Promise((r) => setTimeout(r, 1_000));
    const record = await t.writer.stop();
    expect((await memberList(d0.clientUrl)).members.map((m) => m.name)).toEqual(['d0']);
    await assertNothingLost(label, d0.clientUrl, record, t);
  }, 120_000);
  it('a destination killed while it learns: the walk goes back, the source keeps its quorum and every write', async () => {
    const label = 'abort-to-source';
    const l = await landscape(label, 3, 3);
    const t = await traffic(l, label);
    await walkLive({ spec: l.spec, members: l.plan, host: l.host, timeoutMs: 30_000, stopBefore: ['promote'] });
    await new Promise((r) => setTimeout(r, 500));
    await l.running.get('d0')!.stop({ timeoutMs: 1 });
    const observed = await observeLiveWalk({ members: l.plan, host: l.host });
    const out = liveWayOut(l.spec, observed, { source: true, destination: false });
    expect(out).toEqual({ kind: 'abort-to-source', remove: ['d0'] });
    await takeWayOut(out, observed, { spec: l.spec, members: l.plan, host: l.host });
    expect(l.host.owner).toEqual({ kind: 'seed', seed: SOURCE });
    await new Promise((r) => setTimeout(r, 1_000));
    const record = await t.writer.stop();
    const s0 = l.plan.find((m) => m.name === 's0')!;
    expect((await memberList(s0.clientUrl)).members.map((m) => m.name).sort()).toEqual(['s0', 's1', 's2']);
    // The source never lost its quorum: writes went on through the whole fault.
    console.log(
      `abort to source: longest write gap ${Math.round(longestGap(record.acknowledged, record.startedAt, record.stoppedAt!).ms)} ms`,
    );
    await assertNothingLost(label, s0.clientUrl, record, t);
  }, 120_000);
});
