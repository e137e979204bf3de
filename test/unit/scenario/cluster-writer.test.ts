import { describe, expect, it } from 'vitest';
import { startClusterWriter } from '../../../harness/scenario/cluster-writer.js';
import { EtcdRequestError, type EtcdPut } from '../../../harness/scenario/etcd-client.js';
import { HistoryRecorder } from '../../../harness/scenario/history.js';

type Member = 'ok' | 'refuses' | 'times out';

/** Three fake members whose answer the test sets; every attempt is logged. */
function members(initial: Member[]) {
  const state = [...initial];
  const attempts: { member: number; key: string; value: string }[] = [];
  const put: EtcdPut = async ({ endpoint, key, value }) => {
    await Promise.resolve();
    const member = Number(endpoint);
    attempts.push({ member, key, value });
    if (state[member] === 'refuses') throw new EtcdRequestError(`${endpoint} refused`, { outcome: 'fail' });
    if (state[member] === 'times out') throw new EtcdRequestError(`${endpoint}: no answer`, { outcome: 'unknown' });
    return { revision: attempts.length };
  };
  return { state, attempts, put, endpoints: () => state.map((_, i) => String(i)) };
}

const writeFor = async (ms: number, cluster: ReturnType<typeof members>, history: HistoryRecorder) => {
  const writer = startClusterWriter({
    endpoints: cluster.endpoints,
    prefix: 'w',
    writesPerSecond: 500,
    loops: 1,
    put: cluster.put,
    history,
  });
  await new Promise((r) => setTimeout(r, ms));
  return writer.stop();
};

describe('startClusterWriter with a history', () => {
  it('records each write once, ok with the member that acknowledged it, from its first attempt on', async () => {
    // Prepare: member 0 refuses, member 1 times out, member 2 acknowledges.
    const cluster = members(['refuses', 'times out', 'ok']);
    const history = new HistoryRecorder();
    // Act
    const record = await writeFor(100, cluster, history);
    // Assess
    const ops = history.operations();
    expect(record.acknowledged.length).toBeGreaterThan(3);
    expect(ops.filter((o) => o.outcome === 'ok').map((o) => o.key)).toEqual(record.acknowledged.map((a) => a.key));
    expect(
      ops.filter((o) => o.outcome === 'ok').every((o) => o.seed === 'member-2' && o.op === 'put' && o.client === 0),
    ).toBe(true);
    // The first write tried 0 and 1 before 2: its interval covers the timed-out attempt that may have applied it.
    const first = ops.find((o) => o.key === record.acknowledged[0]!.key)!;
    expect(cluster.attempts.filter((a) => a.key === first.key).map((a) => a.member)).toEqual([0, 1, 2]);
    expect(first.invokedAt).toBeLessThanOrEqual(record.acknowledged[0]!.sentAt);
    expect(new Set(ops.map((o) => o.key)).size).toBe(ops.length);
  });

  it('a write no member acknowledged is of unknown outcome if any attempt may have applied it, failed only when every member refused', async () => {
    // Prepare
    const cluster = members(['refuses', 'times out', 'refuses']);
    const history = new HistoryRecorder();
    // Act: first two members down and one without quorum, then all three down.
    await writeFor(60, cluster, history);
    cluster.state[1] = 'refuses';
    const allDownAt = history.now();
    await writeFor(60, cluster, history);
    // Assess
    const ops = history.operations();
    const before = ops.filter((o) => o.invokedAt < allDownAt);
    const after = ops.filter((o) => o.invokedAt > allDownAt);
    expect(before.length).toBeGreaterThan(0);
    expect(after.length).toBeGreaterThan(0);
    expect(before.every((o) => o.outcome === 'unknown' && o.error?.includes('no answer'))).toBe(true);
    expect(after.every((o) => o.outcome === 'fail')).toBe(true);
    expect(ops.every((o) => o.seed.split(',').length === 3)).toBe(true);
  });

  it('sends no write to a member that stopped answering until it answers a probe, as a gRPC client waits for a READY connection', async () => {
    // Prepare: member 0 accepts connections but does not answer (a member that joins and does not serve yet).
    const cluster = members(['times out', 'ok', 'ok']);
    let serves = false;
    const probed: string[] = [];
    const writer = startClusterWriter({
      endpoints: cluster.endpoints,
      prefix: 'ready',
      writesPerSecond: 500,
      loops: 1,
      put: cluster.put,
      probe: async (endpoint) => {
        probed.push(endpoint);
        return endpoint !== '0' || serves;
      },
    });

    // Act: writes while it does not answer, then while it serves.
    await new Promise((r) => setTimeout(r, 150));
    const tried = cluster.attempts.filter((a) => a.member === 0).length;
    const acknowledged = writer.record().acknowledged.length;
    cluster.state[0] = 'ok';
    serves = true;
    await new Promise((r) => setTimeout(r, 250));
    const record = await writer.stop();

    // Assess: tried once (before any member was known to answer), probed meanwhile, written to again once it answered.
    expect(tried).toBe(1);
    expect(acknowledged).toBeGreaterThan(20);
    expect(probed).toContain('0');
    expect(record.acknowledged.some((a) => a.member === 0)).toBe(true);
  });

  it('keeps 50 acknowledged writes a second by default while each write takes 100 ms (a loaded machine)', async () => {
    // Prepare: three members that answer after 80 ms.
    let revision = 0;
    const put: EtcdPut = async () => {
      await new Promise((r) => setTimeout(r, 100));
      return { revision: ++revision };
    };
    const history = new HistoryRecorder();
    // Act
    const writer = startClusterWriter({ endpoints: () => ['0', '1', '2'], prefix: 'rate', put, history });
    await new Promise((r) => setTimeout(r, 1_500));
    const record = await writer.stop();
    // Assess: the pace held, each loop one client with one write in flight.
    expect(record.acknowledged.filter((a) => a.at - record.startedAt <= 1_500).length / 1.5).toBeGreaterThanOrEqual(50);
    expect(new Set(history.operations().map((o) => o.client)).size).toBe(6);
  });
});
