import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HistoryRecorder, type HistoryOperation } from '../../../harness/scenario/history.js';
import { checkHistoryFile, LinearizabilityCheckerError } from '../../../harness/scenario/linearizability.js';
import { startRegisterClients } from '../../../harness/scenario/register-clients.js';
import { fakeStores } from './fake-stores.js';

/**
 * The built checker (`npm run setup` builds it into .tools/bin) on small hand-made histories: it must
 * accept a linearizable one and reject a stale read, a lost write and a split brain, writing the
 * visualization of each rejected history next to it.
 */

const dir = mkdtempSync(join(tmpdir(), 'gl-linearizability-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Op = Omit<HistoryOperation, 'outcome' | 'seed'> & Partial<Pick<HistoryOperation, 'outcome' | 'seed'>>;
const put = (
  client: number,
  key: string,
  input: string,
  invokedAt: number,
  returnedAt: number,
  more: Partial<Op> = {},
): Op => ({ client, op: 'put', key, input, invokedAt, returnedAt, ...more });
const get = (
  client: number,
  key: string,
  output: string | null,
  invokedAt: number,
  returnedAt: number,
  more: Partial<Op> = {},
): Op => ({ client, op: 'get', key, output, invokedAt, returnedAt, ...more });

function historyFile(name: string, ops: readonly Op[]): string {
  const history = new HistoryRecorder();
  for (const op of ops) history.add({ outcome: 'ok', seed: 'source', ...op });
  const file = join(dir, `${name}.jsonl`);
  history.write(file);
  return file;
}

const t0 = 1_700_000_000_000;

const cases: { name: string; ops: Op[]; illegal?: string[] }[] = [
  {
    name: 'linearizable: a migration where the destination serves what the source acknowledged, a timed-out put either way',
    ops: [
      put(0, 'k', 'a', t0, t0 + 2),
      get(1, 'k', 'a', t0 + 1, t0 + 3),
      put(0, 'k', 'b', t0 + 4, t0 + 504, { outcome: 'unknown', error: 'timeout' }),
      get(1, 'k', 'b', t0 + 600, t0 + 601, { seed: 'destination' }),
      put(2, 'k', 'c', t0 + 700, t0 + 701, { seed: 'destination' }),
      put(0, 'w', 'x', t0 + 700, t0 + 701, { outcome: 'fail', seed: 'source' }),
      get(3, 'k', 'c', t0 + 800, t0 + 801, { seed: 'destination' }),
      get(3, 'w', null, t0 + 800, t0 + 801, { seed: 'destination' }),
    ],
  },
  {
    name: 'stale read: the destination answers the value before the last acknowledged put',
    ops: [
      put(0, 'k', 'a', t0, t0 + 1),
      put(0, 'k', 'b', t0 + 2, t0 + 3),
      get(1, 'k', 'a', t0 + 10, t0 + 11, { seed: 'destination' }),
    ],
    illegal: ['k'],
  },
  {
    name: 'lost write: the final read through the destination misses an acknowledged put',
    ops: [
      put(0, 'w/1', 'a', t0, t0 + 1),
      put(0, 'w/2', 'b', t0 + 2, t0 + 3),
      get(9, 'w/1', 'a', t0 + 10, t0 + 11, { seed: 'destination' }),
      get(9, 'w/2', null, t0 + 10, t0 + 11, { seed: 'destination' }),
    ],
    illegal: ['w/2'],
  },
  {
    name: 'split brain: both seeds accept writes and each serves its own',
    ops: [
      put(0, 'k', 's', t0, t0 + 1),
      put(1, 'k', 'd', t0 + 2, t0 + 3, { seed: 'destination' }),
      get(0, 'k', 's', t0 + 4, t0 + 5),
      get(1, 'k', 'd', t0 + 6, t0 + 7, { seed: 'destination' }),
    ],
    illegal: ['k'],
  },
];

describe('the linearizability checker on hand-made histories', () => {
  it.each(cases)('$name', async ({ name, ops, illegal }) => {
    // Prepare
    const file = historyFile(name.split(':')[0]!.replace(/\W+/g, '-'), ops);
    // Act
    const verdict = await checkHistoryFile(file);
    // Assess
    expect(verdict.operations).toBe(ops.length);
    expect(verdict.clients).toBe(new Set(ops.map((o) => o.client)).size);
    const html = file.replace(/\.jsonl$/, '.html');
    if (!illegal) {
      expect(verdict).toMatchObject({ result: 'linearizable', linearizable: true, illegalKeys: [] });
      expect(existsSync(html)).toBe(false);
      return;
    }
    expect(verdict).toMatchObject({
      result: 'not-linearizable',
      linearizable: false,
      illegalKeys: illegal,
      visualization: html,
    });
    expect(readFileSync(html, 'utf8')).toContain(`seed destination`);
  });

  it('counts what it checked: ok operations and pending puts, not failures or reads without an answer', async () => {
    const verdict = await checkHistoryFile(historyFile('counts', cases[0]!.ops));
    expect(verdict).toMatchObject({
      operations: 8,
      checked: 7,
      pendingPuts: 1,
      unobservedPuts: 0,
      leftOut: 1,
      keys: 2,
    });
  });

  it('writes the visualization of a linearizable history on request', async () => {
    const verdict = await checkHistoryFile(historyFile('always', cases[0]!.ops), { visualize: 'always' });
    expect(verdict.linearizable).toBe(true);
    expect(existsSync(verdict.visualization!)).toBe(true);
  });

  it('a malformed history is an error, not a verdict', async () => {
    const file = join(dir, 'malformed.jsonl');
    writeFileSync(file, '{"client":0,"op":"cas","key":"k"}\n');
    await expect(checkHistoryFile(file)).rejects.toThrow(LinearizabilityCheckerError);
    await expect(checkHistoryFile(file)).rejects.toThrow(/line 1/);
  });
});

describe('the checker on histories the register clients recorded', () => {
  async function record(shared: boolean): Promise<string> {
    const stores = fakeStores({ shared });
    const history = new HistoryRecorder();
    const clients = startRegisterClients({
      history,
      endpoints: { source: 'source', destination: 'destination' },
      keys: ['k0', 'k1', 'k2'],
      clients: ['source', 'source', 'destination', 'destination'],
      opsPerSecond: 200,
      put: stores.put,
      get: stores.get,
    });
    await new Promise((r) => setTimeout(r, 100));
    stores.up.destination = true;
    await new Promise((r) => setTimeout(r, 200));
    await clients.stop();
    return historyFile(shared ? 'recorded-one-store' : 'recorded-split-brain', history.operations());
  }

  it('passes when both seeds serve one store', async () => {
    const verdict = await checkHistoryFile(await record(true));
    expect(verdict.result).toBe('linearizable');
    expect(verdict.checked).toBeGreaterThan(50);
  });

  it('fails when each seed serves its own store', async () => {
    const verdict = await checkHistoryFile(await record(false));
    expect(verdict.result).toBe('not-linearizable');
    expect(verdict.illegalKeyCount).toBeGreaterThan(0);
  });
});
