import { Etcd3 } from 'etcd3';

/**
 * The etcd operations the scenarios need, through etcd's JSON gateway (plain HTTP/1.1, so
 * "acknowledged" is exactly one successful response): a put, a get, a range read for the final reads of
 * a history, and the content under a prefix.
 */

/**
 * How a failed request ended for the client. `fail`: it certainly did not take effect (the connection
 * was refused, or there was no etcd to send it to). `unknown`: it may have (a timeout, a reset, an
 * error answer): a linearizability check must treat such a put as possibly applied.
 */
export type FailedOutcome = 'fail' | 'unknown';

export class EtcdRequestError extends Error {
  override readonly name = 'EtcdRequestError';
  readonly outcome: FailedOutcome;
  /** etcd answered (an error answer, a key held by another value): the member serves. Default: no answer came. */
  readonly answered: boolean;
  constructor(message: string, options: { outcome: FailedOutcome; answered?: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.outcome = options.outcome;
    this.answered = options.answered ?? false;
  }
}

/** The outcome of a request that threw: `unknown` unless the error says it certainly failed. */
export function failedOutcome(error: unknown): FailedOutcome {
  return error instanceof EtcdRequestError ? error.outcome : 'unknown';
}

export interface PutInput {
  /** Client URL, e.g. `http://127.0.0.1:2379`. */
  readonly endpoint: string;
  readonly key: string;
  readonly value: string;
  readonly timeoutMs: number;
}

export interface GetInput {
  readonly endpoint: string;
  readonly key: string;
  readonly timeoutMs: number;
}

/** Resolves with etcd's revision only when etcd answered success; anything else throws `EtcdRequestError`. */
export type EtcdPut = (input: PutInput) => Promise<{ revision: number }>;
/** `value` undefined: the key is absent. Throws `EtcdRequestError` unless etcd answered success. */
export type EtcdGet = (input: GetInput) => Promise<{ value: string | undefined; revision: number }>;

const b64 = (text: string) => Buffer.from(text).toString('base64');
const unb64 = (text: string) => Buffer.from(text, 'base64').toString('utf8');

interface GatewayAnswer {
  header?: { revision?: unknown };
  kvs?: { key?: string; value?: string }[];
}

interface TxnAnswer {
  succeeded?: boolean;
  responses?: { response_range?: { kvs?: { value?: string; mod_revision?: string }[] } }[];
}

/** etcd's answer to a put while a NOSPACE alarm stands. */
export const NO_SPACE = 'database space exceeded';

/** One gateway call; a refused connection certainly did nothing, anything else unanswered may have. */
async function gateway(
  endpoint: string,
  path: string,
  body: object,
  timeoutMs: number,
  what: string,
): Promise<{ answer: GatewayAnswer; revision: number }> {
  let response: Response;
  let answer: unknown;
  try {
    response = await fetch(`${endpoint}${path}`, {
      method: 'POST',
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    answer = await response.json();
  } catch (cause) {
    const refused = (cause as { cause?: { code?: unknown } } | null)?.cause?.code === 'ECONNREFUSED';
    throw new EtcdRequestError(`${what} to ${endpoint}: no answer`, {
      outcome: refused ? 'fail' : 'unknown',
      cause,
    });
  }
  const revision = (answer as GatewayAnswer | null)?.header?.revision;
  // The gateway answers errors as JSON too; only a 200 that carries a header revision is a success.
  // An error answer ("request timed out") does not say whether a put was applied: unknown.
  if (
    !response.ok ||
    (typeof revision !== 'string' && typeof revision !== 'number') ||
    !Number.isFinite(Number(revision))
  ) {
    // Except a refusal by the NOSPACE alarm (the sidecar's write guard): etcd rejects the put when it applies it, certainly.
    const outcome = JSON.stringify(answer).includes(NO_SPACE) ? 'fail' : 'unknown';
    throw new EtcdRequestError(
      `${what} to ${endpoint}: HTTP ${response.status} ${JSON.stringify(answer).slice(0, 200)}`,
      { outcome, answered: true },
    );
  }
  return { answer: answer as GatewayAnswer, revision: Number(revision) };
}

export const gatewayPut: EtcdPut = async ({ endpoint, key, value, timeoutMs }) => {
  const { revision } = await gateway(
    endpoint,
    '/v3/kv/put',
    { key: b64(key), value: b64(value) },
    timeoutMs,
    `put ${key}`,
  );
  return { revision };
};

/**
 * A put of a key written once, as a create: a transaction that puts only while the key does not exist,
 * else reads it. Tried again elsewhere after an attempt of unknown outcome, it cannot apply the value a
 * second time (kube-apiserver creates its objects the same way); when an earlier attempt applied it, the
 * answer is the revision that attempt wrote.
 */
export const gatewayCreate: EtcdPut = async ({ endpoint, key, value, timeoutMs }) => {
  const { answer, revision } = await gateway(
    endpoint,
    '/v3/kv/txn',
    {
      compare: [{ key: b64(key), target: 'CREATE', result: 'EQUAL', create_revision: '0' }],
      success: [{ request_put: { key: b64(key), value: b64(value) } }],
      failure: [{ request_range: { key: b64(key) } }],
    },
    timeoutMs,
    `create ${key}`,
  );
  const txn = answer as TxnAnswer;
  if (txn.succeeded === true) return { revision };
  const existing = txn.responses?.[0]?.response_range?.kvs?.[0];
  if (existing?.value !== b64(value) || !Number.isFinite(Number(existing.mod_revision)))
    // Someone else's value under a key this client writes once: no acknowledgement of this write.
    throw new EtcdRequestError(`create ${key} at ${endpoint}: the key holds another value`, {
      outcome: 'fail',
      answered: true,
    });
  return { revision: Number(existing.mod_revision) };
};

/** A linearizable read (etcd's default for a range without `serializable`). */
export const gatewayGet: EtcdGet = async ({ endpoint, key, timeoutMs }) => {
  const { answer, revision } = await gateway(endpoint, '/v3/kv/range', { key: b64(key) }, timeoutMs, `get ${key}`);
  const value = answer.kvs?.[0]?.value;
  return { value: value === undefined ? undefined : unb64(value), revision };
};

/** Every key in [from, to] with its value, in one linearizable read. */
export async function gatewayRange(input: {
  endpoint: string;
  from: string;
  to: string;
  timeoutMs: number;
}): Promise<Map<string, string>> {
  const rangeEnd = b64(`${input.to}\0`);
  const { answer } = await gateway(
    input.endpoint,
    '/v3/kv/range',
    { key: b64(input.from), range_end: rangeEnd },
    input.timeoutMs,
    `range ${input.from}..${input.to}`,
  );
  return new Map((answer.kvs ?? []).map((kv) => [unb64(kv.key ?? ''), unb64(kv.value ?? '')]));
}

/**
 * A put or get whose endpoint is a name resolved at each call (a seed's etcd exists only while it is
 * hosted there): a name that resolves to nothing is a certain failure, nothing was sent.
 */
export function resolving<I extends { readonly endpoint: string }, R>(
  call: (input: I) => Promise<R>,
  resolve: (name: string) => string | undefined,
): (input: I) => Promise<R> {
  return (input) => {
    const url = resolve(input.endpoint);
    if (!url) return Promise.reject(new EtcdRequestError(`${input.endpoint}: no etcd to send to`, { outcome: 'fail' }));
    return call({ ...input, endpoint: url });
  };
}

/** Every key under `prefix` with its value: what the checks compare the writer's record against. */
export async function readEtcdContent(input: { clientUrl: string; prefix: string }): Promise<Map<string, string>> {
  const client = new Etcd3({ hosts: input.clientUrl, dialTimeout: 5_000 });
  try {
    const all = await client.getAll().prefix(input.prefix).strings();
    return new Map(Object.entries(all));
  } finally {
    client.close();
  }
}
