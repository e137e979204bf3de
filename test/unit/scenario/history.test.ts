import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EtcdRequestError } from '../../../harness/scenario/etcd-client.js';
import { HistoryRecorder, markLossWindow, type HistoryOperation } from '../../../harness/scenario/history.js';

const dir = mkdtempSync(join(tmpdir(), 'gl-history-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A clock the test moves: every reading advances it by 1 ms. */
function ticking(start = 1_000) {
  let t = start;
  return () => t++;
}

describe('HistoryRecorder', () => {
  it('records each operation with its times, answer, outcome and seed', async () => {
    // Prepare
    const history = new HistoryRecorder({ now: ticking() });
    const c = history.newClient();
    // Act
    await history.put({ client: c, key: 'k', value: 'v1', seed: 'source' }, async () => ({ revision: 2 }));
    await history.get({ client: c, key: 'k', seed: 'source' }, async () => 'v1');
    await history.get({ client: c, key: 'other', seed: 'destination' }, async () => undefined);
    const refused = await history.put({ client: c, key: 'k', value: 'v2', seed: 'destination' }, () =>
      Promise.reject(new EtcdRequestError('refused', { outcome: 'fail' })),
    );
    const timedOut = await history.put({ client: c, key: 'k', value: 'v3', seed: 'source' }, () =>
      Promise.reject(new EtcdRequestError('timeout', { outcome: 'unknown' })),
    );
    const strange = await history.get({ client: c, key: 'k', seed: 'source' }, () =>
      Promise.reject(new Error('socket hang up')),
    );
    // Assess
    expect([refused, timedOut, strange]).toEqual(['fail', 'unknown', 'unknown']);
    expect(history.operations()).toEqual<HistoryOperation[]>([
      {
        client: 0,
        op: 'put',
        key: 'k',
        input: 'v1',
        seed: 'source',
        invokedAt: 1_000,
        returnedAt: 1_001,
        outcome: 'ok',
      },
      {
        client: 0,
        op: 'get',
        key: 'k',
        output: 'v1',
        seed: 'source',
        invokedAt: 1_002,
        returnedAt: 1_003,
        outcome: 'ok',
      },
      {
        client: 0,
        op: 'get',
        key: 'other',
        output: null,
        seed: 'destination',
        invokedAt: 1_004,
        returnedAt: 1_005,
        outcome: 'ok',
      },
      {
        client: 0,
        op: 'put',
        key: 'k',
        input: 'v2',
        seed: 'destination',
        invokedAt: 1_006,
        returnedAt: 1_007,
        outcome: 'fail',
        error: 'refused',
      },
      {
        client: 0,
        op: 'put',
        key: 'k',
        input: 'v3',
        seed: 'source',
        invokedAt: 1_008,
        returnedAt: 1_009,
        outcome: 'unknown',
        error: 'timeout',
      },
      {
        client: 0,
        op: 'get',
        key: 'k',
        seed: 'source',
        invokedAt: 1_010,
        returnedAt: 1_011,
        outcome: 'unknown',
        error: 'socket hang up',
      },
    ]);
    expect(history.keys()).toEqual(['k', 'other']);
  });

  it('hands out distinct clients and values', () => {
    const history = new HistoryRecorder();
    const [a, b] = [history.newClient(), history.newClient()];
    expect(a).not.toBe(b);
    const values = [history.uniqueValue(a), history.uniqueValue(b), history.uniqueValue(a)];
    expect(new Set(values).size).toBe(3);
  });

  it('writes JSON lines in invocation order, annotations last', () => {
    const history = new HistoryRecorder();
    history.add({
      client: 1,
      op: 'get',
      key: 'k',
      output: null,
      invokedAt: 20,
      returnedAt: 21,
      outcome: 'ok',
      seed: 'destination',
    });
    history.add({
      client: 0,
      op: 'put',
      key: 'k',
      input: 'a',
      invokedAt: 10,
      returnedAt: 30,
      outcome: 'ok',
      seed: 'source',
    });
    history.annotate('cut', 15, 16);
    const file = join(dir, 'h.jsonl');
    history.write(file);
    const lines = readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.invokedAt ?? l.annotation)).toEqual([10, 20, 'cut']);
    expect(lines[2]).toEqual({ annotation: 'cut', at: 15, until: 16 });
  });
});

describe('markLossWindow', () => {
  const op = (
    seed: string,
    op: 'put' | 'get',
    returnedAt: number,
    outcome: 'ok' | 'fail' | 'unknown' = 'ok',
  ): HistoryOperation => ({
    client: 0,
    op,
    key: 'k',
    ...(op === 'put' ? { input: `v${returnedAt}` } : outcome === 'ok' ? { output: 'x' } : {}),
    invokedAt: returnedAt - 1,
    returnedAt,
    outcome,
    seed,
  });

  it("turns the seed's answers within the window before its last one into unknown, and nothing else", () => {
    // Prepare: source answers at 100..1000, its last at 1000; a window of 300 ms reaches back to 700.
    const ops = [
      op('source', 'put', 100),
      op('source', 'put', 699),
      op('source', 'put', 700),
      op('source', 'get', 900),
      op('source', 'put', 1_000),
      op('destination', 'put', 950),
      op('source', 'put', 1_200, 'fail'),
    ];
    // Act
    const result = markLossWindow(ops, { seed: 'source', lengthMs: 300, reason: 'S3 loss window' });
    // Assess
    expect([result.from, result.to, result.changed]).toEqual([700, 1_000, 3]);
    expect(result.ops.map((o) => o.outcome)).toEqual(['ok', 'ok', 'unknown', 'unknown', 'unknown', 'ok', 'fail']);
    const read = result.ops[3]!;
    expect(read.output).toBeUndefined();
    expect(read.note).toBe('S3 loss window');
    expect(ops[3]!.outcome).toBe('ok'); // the input is not changed
  });

  it('measures the window from the last acknowledged put and marks every later answer, such as reads served while puts were refused', () => {
    const ops = [
      op('source', 'put', 100),
      op('source', 'put', 1_000),
      op('source', 'put', 1_100, 'fail'),
      op('source', 'get', 1_500),
      op('source', 'get', 4_000),
    ];
    const result = markLossWindow(ops, { seed: 'source', lengthMs: 300, reason: 'S4 loss window' });
    expect([result.from, result.to, result.changed]).toEqual([700, 4_000, 3]);
    expect(result.ops.map((o) => o.outcome)).toEqual(['ok', 'unknown', 'fail', 'unknown', 'unknown']);
  });

  it('changes nothing when the seed never answered', () => {
    const ops = [op('destination', 'put', 10)];
    expect(markLossWindow(ops, { seed: 'source', lengthMs: 300, reason: 'r' })).toEqual({
      ops,
      from: undefined,
      to: undefined,
      changed: 0,
    });
  });
});
