import { setTimeout as sleep } from 'node:timers/promises';
import { gatewayGet, gatewayPut, gatewayRange, type EtcdGet, type EtcdPut } from './etcd-client.js';
import type { HistoryRecorder, Outcome } from './history.js';
import type { SeedRole } from './writer.js';

/**
 * Concurrent clients that put and read a few shared keys through the etcds a control plane's clients
 * can reach, recording every operation into a history for the linearizability checker. Where the
 * writer proves the write path (one new key per write, >= 50 a second), these make the history dense:
 * several clients on the same keys, reads as well as writes, each going to its own endpoint first and
 * falling over to the others in turn when it fails, as a client behind a load balancer (or given every
 * member's address) would. Of a migration the endpoints are the two seeds, so reads go through the
 * destination as soon as it serves, and through the source as long as it does; of an HA cluster, its
 * members.
 */

export interface RegisterClientsOptions<E extends string = SeedRole> {
  readonly history: HistoryRecorder;
  /**
   * What `put` and `get` receive as each endpoint (a URL, or a name they resolve), by the name the
   * history records (`seed`). A client falls over in this order, from the one after its first choice.
   */
  readonly endpoints: Readonly<Record<E, string>>;
  readonly keys: readonly string[];
  /** One client per entry: the endpoint it tries first. */
  readonly clients: readonly NoInfer<E>[];
  /** Per client. Default 20. */
  readonly opsPerSecond?: number;
  /** Share of reads. Default 0.5. */
  readonly readShare?: number;
  /** Default 1,000 ms: an answer later than this is a timeout, of unknown outcome. */
  readonly timeoutMs?: number;
  /** After both seeds failed the client pauses, doubling from 10 ms up to this. Default 200 ms. */
  readonly maxPauseMs?: number;
  readonly put?: EtcdPut;
  readonly get?: EtcdGet;
  readonly random?: () => number;
}

export interface RegisterClients {
  /** Stops every client after its operation in flight; resolves when all have stopped. */
  stop(): Promise<void>;
}

export function startRegisterClients<E extends string>(options: RegisterClientsOptions<E>): RegisterClients {
  if (options.keys.length === 0) throw new RangeError('register clients need at least one key');
  const names = Object.keys(options.endpoints) as E[];
  const unknown = options.clients.filter((c) => !names.includes(c));
  if (unknown.length > 0)
    throw new RangeError(`register clients prefer endpoints they were not given: ${unknown.join(', ')}`);
  /** The endpoints a client tries, its first choice first. */
  const order = (prefer: E) => names.map((_, i) => names[(names.indexOf(prefer) + i) % names.length]!);
  const { history } = options;
  const put = options.put ?? gatewayPut;
  const get = options.get ?? gatewayGet;
  const random = options.random ?? Math.random;
  const intervalMs = 1_000 / (options.opsPerSecond ?? 20);
  const readShare = options.readShare ?? 0.5;
  const timeoutMs = options.timeoutMs ?? 1_000;
  const maxPauseMs = options.maxPauseMs ?? 200;
  let running = true;
  const stopping = new AbortController();
  const pause = (ms: number) =>
    ms > 0 ? sleep(ms, undefined, { signal: stopping.signal }).catch(() => undefined) : Promise.resolve();

  const operate = (client: number, seed: E, key: string, read: boolean) => {
    const endpoint = options.endpoints[seed];
    if (read) return history.get({ client, key, seed }, async () => (await get({ endpoint, key, timeoutMs })).value);
    const value = history.uniqueValue(client);
    return history.put({ client, key, value, seed }, () => put({ endpoint, key, value, timeoutMs }));
  };

  const loop = async (prefer: E) => {
    const client = history.newClient();
    const tries = order(prefer);
    let pauseMs = 10;
    while (running) {
      const slotEnd = history.now() + intervalMs;
      const key = options.keys[Math.floor(random() * options.keys.length)]!;
      const read = random() < readShare;
      let outcome: Outcome = 'fail';
      for (let i = 0; i < tries.length && outcome !== 'ok' && (i === 0 || running); i++)
        outcome = await operate(client, tries[i]!, key, read);
      if (outcome === 'ok') pauseMs = 10;
      else {
        await pause(pauseMs);
        pauseMs = Math.min(pauseMs * 2, maxPauseMs);
      }
      await pause(slotEnd - history.now());
    }
  };

  const loops = options.clients.map(loop);
  return {
    async stop() {
      running = false;
      stopping.abort();
      await Promise.all(loops);
    },
  };
}

/**
 * The last operations of a history: one read of every key it touched, through the seed that serves at
 * the end. This is what turns a lost write into a violation the checker sees: an acknowledged put that
 * the final read does not return. The keys are read in one linearizable range read, recorded as one
 * get per key with the range's invocation and return times (each key read at some point within it).
 */
export async function recordFinalReads(input: {
  history: HistoryRecorder;
  seed: string;
  endpoint: string;
  timeoutMs?: number;
  range?: typeof gatewayRange;
}): Promise<number> {
  const { history } = input;
  const keys = history.keys();
  if (keys.length === 0) return 0;
  const client = history.newClient();
  const invokedAt = history.now();
  const content = await (input.range ?? gatewayRange)({
    endpoint: input.endpoint,
    from: keys[0]!,
    to: keys.at(-1)!,
    timeoutMs: input.timeoutMs ?? 10_000,
  });
  const returnedAt = history.now();
  for (const key of keys)
    history.add({
      client,
      op: 'get',
      key,
      output: content.get(key) ?? null,
      invokedAt,
      returnedAt,
      outcome: 'ok',
      seed: input.seed,
    });
  return keys.length;
}
