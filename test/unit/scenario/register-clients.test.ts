import { describe, expect, it } from 'vitest';
import { EtcdRequestError, type EtcdGet, type EtcdPut } from '../../../harness/scenario/etcd-client.js';
import { HistoryRecorder } from '../../../harness/scenario/history.js';
import { recordFinalReads, startRegisterClients } from '../../../harness/scenario/register-clients.js';
import type { SeedRole } from '../../../harness/scenario/writer.js';
import { fakeStores } from './fake-stores.js';

const endpoints = { source: 'source', destination: 'destination' } as const;
const okBy = (history: HistoryRecorder, client: number, seed: SeedRole) =>
  history.operations().filter((o) => o.client === client && o.seed === seed && o.outcome === 'ok');

describe('startRegisterClients', () => {
  it('each client goes to its preferred seed while it serves, to the other while it does not, reading and writing shared keys', async () => {
    // Prepare: only the source serves.
    const stores = fakeStores({ shared: true });
    const history = new HistoryRecorder();
    const clients = startRegisterClients({
      history,
      endpoints,
      keys: ['k0', 'k1'],
      clients: ['source', 'destination'],
      opsPerSecond: 200,
      put: stores.put,
      get: stores.get,
    });
    await new Promise((r) => setTimeout(r, 150));
    // Act: the destination serves as well.
    stores.up.destination = true;
    const switchedAt = history.now();
    await new Promise((r) => setTimeout(r, 150));
    await clients.stop();
    // Assess: client 0 prefers the source, client 1 the destination.
    expect(okBy(history, 0, 'destination')).toEqual([]);
    expect(okBy(history, 1, 'source').length).toBeGreaterThan(5);
    expect(okBy(history, 1, 'source').every((o) => o.invokedAt < switchedAt)).toBe(true);
    expect(okBy(history, 1, 'destination').length).toBeGreaterThan(5);
    // Before the switch, client 1 tried the destination first each time and recorded that it failed.
    expect(
      history.operations().filter((o) => o.client === 1 && o.seed === 'destination' && o.outcome === 'fail').length,
    ).toBeGreaterThan(5);
    const ops = history.operations();
    expect(new Set(ops.map((o) => o.op))).toEqual(new Set(['put', 'get']));
    expect(new Set(ops.map((o) => o.key))).toEqual(new Set(['k0', 'k1']));
    const values = ops.filter((o) => o.op === 'put').map((o) => o.input);
    expect(new Set(values).size).toBe(values.length);
    // A client is sequential: none of its operations overlaps its next one.
    for (const client of [0, 1]) {
      const own = ops.filter((o) => o.client === client);
      own.slice(1).forEach((o, i) => expect(o.invokedAt).toBeGreaterThanOrEqual(own[i]!.returnedAt));
    }
  });

  it('pauses, doubling up to its cap, while no seed serves', async () => {
    const stores = fakeStores();
    stores.up.source = false;
    const history = new HistoryRecorder();
    const clients = startRegisterClients({
      history,
      endpoints,
      keys: ['k'],
      clients: ['source'],
      opsPerSecond: 1_000,
      maxPauseMs: 40,
      put: stores.put,
      get: stores.get,
    });
    await new Promise((r) => setTimeout(r, 300));
    await clients.stop();
    // Two attempts a round; pauses 10, 20, 40, 40, ... ms: about 9 rounds in 300 ms, never hundreds.
    const attempts = history.operations().length;
    expect(attempts).toBeGreaterThanOrEqual(8);
    expect(attempts).toBeLessThanOrEqual(30);
    expect(history.operations().every((o) => o.outcome === 'fail')).toBe(true);
  });

  it('with three endpoints, a client falls over through the others in order from its first choice', async () => {
    // Prepare: of three members, only the last answers.
    const up: Record<string, boolean> = { m0: false, m1: false, m2: true };
    const put: EtcdPut = async ({ endpoint }) => {
      await Promise.resolve();
      if (!up[endpoint]) throw new EtcdRequestError(`${endpoint} refused`, { outcome: 'fail' });
      return { revision: 1 };
    };
    const get: EtcdGet = async ({ endpoint }) => (
      await put({ endpoint, key: '', value: '', timeoutMs: 1 }),
      { value: undefined, revision: 1 }
    );
    const history = new HistoryRecorder();
    // Act
    const clients = startRegisterClients({
      history,
      endpoints: { m0: 'm0', m1: 'm1', m2: 'm2' },
      keys: ['k'],
      clients: ['m1'],
      opsPerSecond: 200,
      put,
      get,
    });
    await new Promise((r) => setTimeout(r, 100));
    await clients.stop();
    // Assess: m1, then m2 (which answers); m0 is never reached.
    const seeds = history.operations().map((o) => o.seed);
    expect(seeds.length).toBeGreaterThan(4);
    expect(seeds.slice(0, 4)).toEqual(['m1', 'm2', 'm1', 'm2']);
    expect(seeds).not.toContain('m0');
  });

  it('refuses a client whose first choice is not an endpoint', () => {
    expect(() =>
      startRegisterClients<string>({
        history: new HistoryRecorder(),
        endpoints: { m0: 'a' },
        keys: ['k'],
        clients: ['m1'],
      }),
    ).toThrow(/m1/);
  });

  it('refuses to start without keys', () => {
    expect(() =>
      startRegisterClients({ history: new HistoryRecorder(), endpoints, keys: [], clients: ['source'] }),
    ).toThrow(RangeError);
  });
});

describe('recordFinalReads', () => {
  it('reads every key of the history in one range and records a get per key, absent ones as null', async () => {
    const history = new HistoryRecorder();
    history.add({
      client: 0,
      op: 'put',
      key: 'b',
      input: 'x',
      invokedAt: 1,
      returnedAt: 2,
      outcome: 'ok',
      seed: 'source',
    });
    history.add({
      client: 0,
      op: 'put',
      key: 'a',
      input: 'y',
      invokedAt: 3,
      returnedAt: 4,
      outcome: 'unknown',
      seed: 'source',
    });
    const asked: { from: string; to: string }[] = [];
    const read = await recordFinalReads({
      history,
      seed: 'destination',
      endpoint: 'http://dst',
      range: async ({ from, to }) => {
        asked.push({ from, to });
        return new Map([
          ['b', 'x'],
          ['unrelated', 'z'],
        ]);
      },
    });
    expect(read).toBe(2);
    expect(asked).toEqual([{ from: 'a', to: 'b' }]);
    const finals = history.operations().filter((o) => o.op === 'get');
    expect(finals.map((o) => [o.key, o.output, o.seed, o.client])).toEqual([
      ['a', null, 'destination', 0],
      ['b', 'x', 'destination', 0],
    ]);
    expect(finals[0]!.invokedAt).toBe(finals[1]!.invokedAt);
  });
});
