import { Etcd3 } from 'etcd3';

/**
 * The two etcd operations the scenarios need: one acknowledged put through etcd's JSON gateway (plain
 * HTTP/1.1, so "acknowledged" is exactly one successful response), and the content under a prefix.
 */

export class EtcdPutError extends Error {
  override readonly name = 'EtcdPutError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export interface PutInput {
  /** Client URL, e.g. `http://127.0.0.1:2379`. */
  readonly endpoint: string;
  readonly key: string;
  readonly value: string;
  readonly timeoutMs: number;
}

/** Resolves with etcd's revision only when etcd answered success; anything else throws `EtcdPutError`. */
export type EtcdPut = (input: PutInput) => Promise<{ revision: number }>;

const b64 = (text: string) => Buffer.from(text).toString('base64');

export const gatewayPut: EtcdPut = async ({ endpoint, key, value, timeoutMs }) => {
  let response: Response;
  let body: unknown;
  try {
    response = await fetch(`${endpoint}/v3/kv/put`, {
      method: 'POST',
      body: JSON.stringify({ key: b64(key), value: b64(value) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    body = await response.json();
  } catch (cause) {
    throw new EtcdPutError(`put ${key} to ${endpoint}: no answer`, { cause });
  }
  const revision = (body as { header?: { revision?: unknown } } | null)?.header?.revision;
  // The gateway answers errors as JSON too; only a 200 that carries a header revision is a commit.
  if (!response.ok || (typeof revision !== 'string' && typeof revision !== 'number') || !Number.isFinite(Number(revision))) {
    throw new EtcdPutError(`put ${key} to ${endpoint}: HTTP ${response.status} ${JSON.stringify(body).slice(0, 200)}`);
  }
  return { revision: Number(revision) };
};

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
