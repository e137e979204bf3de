import { describe, expect, it } from 'vitest';
import { EtcdRequestError, type EtcdPut } from '../../../harness/scenario/etcd-client.js';
import { HistoryRecorder } from '../../../harness/scenario/history.js';
import { startWriter, type SeedRole } from '../../../harness/scenario/writer.js';
import { untilWith } from '../../../harness/until.js';

/** A put against two fake etcds whose availability the test switches; revisions per endpoint. */
function fakeEtcds() {
  const up: Record<SeedRole, boolean> = { source: true, destination: false };
  const stored: Record<SeedRole, Map<string, string>> = { source: new Map(), destination: new Map() };
  const revision: Record<SeedRole, number> = { source: 0, destination: 0 };
  const put: EtcdPut = async ({ endpoint, key, value }) => {
    const seed = endpoint as SeedRole;
    await Promise.resolve();
    if (!up[seed]) throw new EtcdRequestError(`${seed} refused`, { outcome: 'fail' });
    stored[seed].set(key, value);
    return { revision: ++revision[seed] };
  };
  return { up, stored, put };
}

const endpoints = { source: 'source', destination: 'destination' } as const;

const until = untilWith({ timeoutMs: 4_000, intervalMs: 5 });

describe('startWriter', () => {
  it('writes to the source until it fails, then to the destination at once, recording who acknowledged', async () => {
    // Prepare
    const etcds = fakeEtcds();
    const writer = startWriter({
      endpoints,
      prefix: 't',
      writesPerSecond: 500,
      probeIntervalMs: 0,
      put: etcds.put,
      mainLoops: 1,
    });
    await until('10 acknowledged writes', () => writer.record().acknowledged.length >= 10);
    // Act
    etcds.up.source = false;
    etcds.up.destination = true;
    await until(
      '10 writes acknowledged by the destination',
      () => writer.record().acknowledged.filter((w) => w.seed === 'destination').length >= 10,
    );
    const record = await writer.stop();
    // Assess
    const seeds = record.acknowledged.map((w) => w.seed);
    expect(seeds.indexOf('destination')).toBeGreaterThan(0);
    expect(seeds.slice(seeds.indexOf('destination')).every((s) => s === 'destination')).toBe(true);
    expect(writer.current).toBe('destination');
    for (const w of record.acknowledged) expect(etcds.stored[w.seed].get(w.key)).toBe(w.value);
    expect(record.failed.some((f) => f.seed === 'source')).toBe(true);
    expect(new Set(record.acknowledged.map((w) => w.key)).size).toBe(record.acknowledged.length);
  });

  it('never records a failed write as acknowledged, and pauses instead of spinning when both fail', async () => {
    const etcds = fakeEtcds();
    etcds.up.source = false;
    const writer = startWriter({
      endpoints,
      prefix: 't',
      writesPerSecond: 1_000,
      bothFailedPauseMs: 50,
      probeIntervalMs: 0,
      put: etcds.put,
      mainLoops: 1,
    });
    await new Promise((r) => setTimeout(r, 220));
    const record = await writer.stop();
    expect(record.acknowledged).toEqual([]);
    // Two attempts per round, one round per 50 ms pause: about 10, never hundreds.
    expect(record.failed.length).toBeGreaterThanOrEqual(4);
    expect(record.failed.length).toBeLessThanOrEqual(14);
  });

  it('the probe loop writes to the other endpoint, so a source still accepting writes after the switch is seen', async () => {
    // Prepare: one main loop and the probe loop, each a client of the history (the main loop's is made first).
    const etcds = fakeEtcds();
    const history = new HistoryRecorder();
    const writer = startWriter({
      endpoints,
      prefix: 't',
      writesPerSecond: 200,
      probeIntervalMs: 10,
      put: etcds.put,
      mainLoops: 1,
      history,
    });
    const [mainClient, probeClient] = [0, 1];
    await until('5 acknowledged writes', () => writer.record().acknowledged.length >= 5);
    etcds.up.destination = true;
    etcds.up.source = false;
    await until('the switch to the destination', () => writer.current === 'destination');

    // Act: split brain, the source serves again; the writer runs on for 20 more writes to the destination.
    const servesAgainAt = history.now();
    etcds.up.source = true;
    const onDestination = () => writer.record().acknowledged.filter((w) => w.seed === 'destination').length;
    const before = onDestination();
    await until('20 more writes to the destination', () => onDestination() >= before + 20);
    const record = await writer.stop();

    // Assess: the main loop stayed on the destination, and the probe loop's writes to the source were acknowledged.
    const toSourceAfter = history
      .operations()
      .filter((o) => o.seed === 'source' && o.outcome === 'ok' && o.invokedAt >= servesAgainAt);
    expect(writer.current).toBe('destination');
    expect(toSourceAfter.length).toBeGreaterThan(0);
    expect(new Set(toSourceAfter.map((o) => o.client))).toEqual(new Set([probeClient]));
    expect(history.operations().filter((o) => o.client === mainClient && o.invokedAt >= servesAgainAt)).not.toEqual([]);
    for (const o of toSourceAfter)
      expect(record.acknowledged).toContainEqual(expect.objectContaining({ key: o.key, seed: 'source' }));
  });

  it('holds at least 50 acknowledged writes a second at its default pace', async () => {
    const etcds = fakeEtcds();
    const writer = startWriter({ endpoints, prefix: 't', probeIntervalMs: 0, put: etcds.put, mainLoops: 1 });
    await new Promise((r) => setTimeout(r, 500));
    const record = await writer.stop();
    const seconds = (record.stoppedAt! - record.startedAt) / 1_000;
    expect(record.acknowledged.length / seconds).toBeGreaterThanOrEqual(50);
  });

  it('with two main loops keeps two writes in flight (the pace holds when each write is slow), each loop its own client', async () => {
    // Prepare: every write takes 30 ms; the put counts how many are in flight at once.
    const etcds = fakeEtcds();
    let inFlight = 0;
    let most = 0;
    const slow: EtcdPut = async (input) => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 30));
      inFlight -= 1;
      return etcds.put(input);
    };
    const run = async (mainLoops: number, history?: HistoryRecorder) => {
      most = 0;
      const writer = startWriter({
        endpoints,
        prefix: `t${mainLoops}`,
        probeIntervalMs: 0,
        put: slow,
        mainLoops,
        history,
      });
      await until('6 acknowledged writes', () => writer.record().acknowledged.length >= 6);
      await writer.stop();
      return most;
    };
    const history = new HistoryRecorder();
    // Act + Assess: one loop never has two writes out; two loops do, as two clients.
    expect(await run(1)).toBe(1);
    expect(await run(2, history)).toBe(2);
    expect(new Set(history.operations().map((o) => o.client)).size).toBe(2);
  });

  it('keeps 50 acknowledged writes a second by default while each write takes 100 ms (a loaded machine), and no more than its pace while writes are fast', async () => {
    // Prepare: every write answered after 80 ms, then every write at once.
    const etcds = fakeEtcds();
    const rate = async (latencyMs: number) => {
      const put: EtcdPut = async (input) => {
        await new Promise((r) => setTimeout(r, latencyMs));
        return etcds.put(input);
      };
      const writer = startWriter({ endpoints, prefix: `rate${latencyMs}`, probeIntervalMs: 0, put });
      await new Promise((r) => setTimeout(r, 1_500));
      const record = await writer.stop();
      const acks = record.acknowledged.filter((w) => w.at - record.startedAt <= 1_500);
      return acks.length / 1.5;
    };
    // Act + Assess
    expect(await rate(100)).toBeGreaterThanOrEqual(50);
    expect(await rate(0)).toBeLessThanOrEqual(110);
  });

  it('stop is bounded by the write timeout even when a write hangs', async () => {
    const hanging: EtcdPut = ({ timeoutMs }) =>
      new Promise((_, reject) =>
        setTimeout(() => reject(new EtcdRequestError('timeout', { outcome: 'unknown' })), timeoutMs),
      );
    const writer = startWriter({ endpoints, prefix: 't', timeoutMs: 100, put: hanging, mainLoops: 1 });
    const started = Date.now();
    await new Promise((r) => setTimeout(r, 20));
    const record = await writer.stop();
    expect(Date.now() - started).toBeLessThan(400);
    expect(record.acknowledged).toEqual([]);
  });

  it('records every attempt in a history too: acknowledged as ok, refused as fail, timed out as unknown, its two loops as two clients', async () => {
    // Prepare: the source refuses, the destination hangs past the timeout once, then serves.
    const etcds = fakeEtcds();
    etcds.up.source = false;
    etcds.up.destination = true;
    let hangOnce = true;
    const put: EtcdPut = async (input) => {
      if (input.endpoint === 'destination' && hangOnce) {
        hangOnce = false;
        throw new EtcdRequestError('timeout', { outcome: 'unknown' });
      }
      return etcds.put(input);
    };
    const history = new HistoryRecorder();
    // Act
    const writer = startWriter({
      endpoints,
      prefix: 't',
      writesPerSecond: 200,
      probeIntervalMs: 10,
      put,
      history,
      mainLoops: 1,
    });
    await until('10 acknowledged writes', () => writer.record().acknowledged.length >= 10);
    const record = await writer.stop();
    // Assess
    const ops = history.operations();
    expect(ops).toHaveLength(record.acknowledged.length + record.failed.length);
    expect(ops.every((o) => o.op === 'put')).toBe(true);
    for (const w of record.acknowledged)
      expect(ops).toContainEqual({
        client: expect.any(Number),
        op: 'put',
        key: w.key,
        input: w.value,
        invokedAt: w.sentAt,
        returnedAt: w.at,
        outcome: 'ok',
        seed: w.seed,
      });
    expect(ops.filter((o) => o.seed === 'source').every((o) => o.outcome === 'fail')).toBe(true);
    expect(ops.filter((o) => o.outcome === 'unknown')).toHaveLength(1);
    expect(new Set(ops.map((o) => o.client))).toEqual(new Set([0, 1]));
  });
});
