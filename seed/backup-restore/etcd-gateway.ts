import { EtcdGatewayError } from './errors.js';

/**
 * The few etcd v3 calls the cluster sidecar makes, over etcd's JSON gateway (`/v3/...`) with `fetch`:
 * every call is bounded by its timeout and holds no connection state, so a member that restarts on
 * another address, or answers nothing while it has no quorum, never wedges a client. IDs and revisions
 * are decimal strings, as the gateway writes uint64 values.
 */

export interface ResponseHeader {
  readonly cluster_id?: string;
  readonly member_id?: string;
  readonly revision?: string;
  readonly raft_term?: string;
}

export interface MemberStatus {
  readonly clusterId: string;
  readonly memberId: string;
  /** The member ID this member believes leads; '0' while there is none. */
  readonly leader: string;
  readonly raftTerm: number;
  readonly raftIndex: number;
  readonly raftAppliedIndex: number;
  readonly isLearner: boolean;
  readonly revision: number;
}

export interface ClusterMember {
  readonly id: string;
  /** Empty until the member has started (a member added but never started has no name). */
  readonly name: string;
  readonly peerUrls: readonly string[];
  readonly clientUrls: readonly string[];
  readonly isLearner: boolean;
}

export interface KeyValue {
  readonly key: string;
  readonly value: string;
  readonly modRevision: number;
}

const DEFAULT_TIMEOUT_MS = 2_000;

export async function call<T>(endpoint: string, path: string, body: unknown, timeoutMs: number): Promise<T> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${endpoint}${path}`, {
      method: 'POST',
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    text = await res.text();
  } catch (cause) {
    throw new EtcdGatewayError(
      `${endpoint}${path}: no answer within ${timeoutMs} ms`,
      { endpoint, path, status: undefined },
      { cause },
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new EtcdGatewayError(
      `${endpoint}${path}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`,
      { endpoint, path, status: res.status },
      { cause },
    );
  }
  const error = (parsed as { error?: unknown; message?: unknown }).error;
  if (!res.ok || error !== undefined) {
    throw new EtcdGatewayError(
      `${endpoint}${path}: HTTP ${res.status} ${String((parsed as { message?: unknown }).message ?? error ?? text).slice(0, 300)}`,
      { endpoint, path, status: res.status },
    );
  }
  return parsed as T;
}

const b64 = (text: string) => Buffer.from(text).toString('base64');
const fromB64 = (text: string | undefined) => Buffer.from(text ?? '', 'base64').toString('utf8');

/** etcd's cluster ID as etcdctl prints it and the owner record writes it (the gateway gives it in decimal). */
export function clusterIdHex(decimal: string): string {
  return BigInt(decimal).toString(16);
}

/** The cluster ID (hex) of the member at `endpoint`. */
export async function clusterIdOf(endpoint: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<string> {
  return clusterIdHex((await memberStatus(endpoint, timeoutMs)).clusterId);
}

export async function memberStatus(endpoint: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<MemberStatus> {
  const res = await call<{
    header?: ResponseHeader;
    leader?: string;
    raftTerm?: string;
    raftIndex?: string;
    raftAppliedIndex?: string;
    isLearner?: boolean;
  }>(endpoint, '/v3/maintenance/status', {}, timeoutMs);
  return {
    clusterId: res.header?.cluster_id ?? '0',
    memberId: res.header?.member_id ?? '0',
    leader: res.leader ?? '0',
    raftTerm: Number(res.raftTerm ?? 0),
    raftIndex: Number(res.raftIndex ?? 0),
    raftAppliedIndex: Number(res.raftAppliedIndex ?? 0),
    isLearner: res.isLearner === true,
    revision: Number(res.header?.revision ?? 0),
  };
}

interface RawMember {
  ID?: string;
  name?: string;
  peerURLs?: string[];
  clientURLs?: string[];
  isLearner?: boolean;
}
const member = (m: RawMember): ClusterMember => ({
  id: m.ID ?? '0',
  name: m.name ?? '',
  peerUrls: m.peerURLs ?? [],
  clientUrls: m.clientURLs ?? [],
  isLearner: m.isLearner === true,
});

export async function memberList(
  endpoint: string,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<{ clusterId: string; members: ClusterMember[] }> {
  const res = await call<{ header?: ResponseHeader; members?: RawMember[] }>(
    endpoint,
    '/v3/cluster/member/list',
    {},
    timeoutMs,
  );
  return { clusterId: res.header?.cluster_id ?? '0', members: (res.members ?? []).map(member) };
}

/** etcd refused the call because the member is a learner (etcd's ErrGRPCNotSupportedForLearner): it serves almost nothing until promoted. */
export function refusedAsLearner(error: unknown): boolean {
  return error instanceof EtcdGatewayError && error.message.includes('rpc not supported for learner');
}

/** Adds a member (a learner by default: it does not count for the quorum until it is promoted). */
export async function memberAdd(
  endpoint: string,
  input: { peerUrl: string; learner: boolean },
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<{ added: ClusterMember; members: ClusterMember[] }> {
  const res = await call<{ member?: RawMember; members?: RawMember[] }>(
    endpoint,
    '/v3/cluster/member/add',
    { peerURLs: [input.peerUrl], isLearner: input.learner },
    timeoutMs,
  );
  return { added: member(res.member ?? {}), members: (res.members ?? []).map(member) };
}

export async function memberRemove(endpoint: string, id: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<void> {
  await call(endpoint, '/v3/cluster/member/remove', { ID: id }, timeoutMs);
}

/** Fails while the learner is not in sync with the leader; the caller retries. */
export async function memberPromote(endpoint: string, id: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<void> {
  await call(endpoint, '/v3/cluster/member/promote', { ID: id }, timeoutMs);
}

/**
 * Hands leadership to `targetId` (etcd's MoveLeader): the leader stops taking proposals and tells the
 * target to campaign at once, so writes pause for one round trip instead of an election timeout. Only the
 * leader accepts it: `endpoint` must be the leader's.
 */
export async function moveLeader(endpoint: string, targetId: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<void> {
  await call(endpoint, '/v3/maintenance/transfer-leadership', { targetID: targetId }, timeoutMs);
}

/**
 * Every key under `prefix` (or the one key) with its value. `serializable` reads the member's own data
 * without asking the leader: it answers without a quorum, but may lag; the default is linearizable.
 */
export async function range(
  endpoint: string,
  input: { key: string; prefix?: boolean; serializable?: boolean },
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<{ header: ResponseHeader; kvs: KeyValue[] }> {
  const rangeEnd = input.prefix ? prefixEnd(input.key) : undefined;
  const res = await call<{ header?: ResponseHeader; kvs?: { key?: string; value?: string; mod_revision?: string }[] }>(
    endpoint,
    '/v3/kv/range',
    {
      key: b64(input.key),
      ...(rangeEnd === undefined ? {} : { range_end: rangeEnd }),
      ...(input.serializable ? { serializable: true } : {}),
    },
    timeoutMs,
  );
  return {
    header: res.header ?? {},
    kvs: (res.kvs ?? []).map((kv) => ({
      key: fromB64(kv.key),
      value: fromB64(kv.value),
      modRevision: Number(kv.mod_revision ?? 0),
    })),
  };
}

/** Writes one key; returns the revision the write landed on. */
export async function put(
  endpoint: string,
  input: { key: string; value: string },
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<number> {
  const res = await call<{ header?: ResponseHeader }>(
    endpoint,
    '/v3/kv/put',
    { key: b64(input.key), value: b64(input.value) },
    timeoutMs,
  );
  return Number(res.header?.revision ?? 0);
}

/** Writes the key only if it does not exist; returns whether this call wrote it. */
export async function putIfAbsent(
  endpoint: string,
  input: { key: string; value: string },
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<boolean> {
  const key = b64(input.key);
  const res = await call<{ succeeded?: boolean }>(
    endpoint,
    '/v3/kv/txn',
    {
      compare: [{ target: 'VERSION', key, result: 'EQUAL', version: '0' }],
      success: [{ request_put: { key, value: b64(input.value) } }],
    },
    timeoutMs,
  );
  return res.succeeded === true;
}

/** The range end that selects every key starting with `prefix` (etcd's prefix convention). */
function prefixEnd(prefix: string): string {
  const bytes = Buffer.from(prefix);
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i]! < 0xff) {
      const end = Buffer.from(bytes.subarray(0, i + 1));
      end[i] = bytes[i]! + 1;
      return end.toString('base64');
    }
  }
  return Buffer.from([0]).toString('base64');
}

/**
 * An etcd alarm. While `NOSPACE` stands, the cluster applies no put (reads, deletes and compaction go on);
 * while `CORRUPT` stands, it applies no write at all (puts, deletes, transactions that write, leases,
 * compaction), and reads and watches go on. Both go through raft and stay in the database: a restart, and
 * a snapshot of it restored elsewhere, keep them.
 */
export interface EtcdAlarm {
  readonly memberId: string;
  readonly alarm: string;
}

export type WriteAlarm = 'NOSPACE' | 'CORRUPT';

/** Every alarm the cluster holds (raised through raft: one list for all members). */
export async function alarms(endpoint: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<EtcdAlarm[]> {
  const res = await call<{ alarms?: { memberID?: string; alarm?: string }[] }>(
    endpoint,
    '/v3/maintenance/alarm',
    { action: 'GET' },
    timeoutMs,
  );
  return (res.alarms ?? []).map((a) => ({ memberId: a.memberID ?? '0', alarm: a.alarm ?? 'NONE' }));
}

/**
 * Raises `alarm` in the name of the member behind `endpoint` (`memberId` when the caller knows it, else
 * one status call first): from the moment raft applies it, etcd refuses what the alarm covers, and
 * whatever it acknowledged before is applied.
 */
export async function raiseAlarm(
  endpoint: string,
  alarm: WriteAlarm,
  timeoutMs = DEFAULT_TIMEOUT_MS,
  memberId?: string,
): Promise<void> {
  const id = memberId ?? (await memberStatus(endpoint, timeoutMs)).memberId;
  await call(endpoint, '/v3/maintenance/alarm', { action: 'ACTIVATE', memberID: id, alarm }, timeoutMs);
}

/**
 * Clears every alarm of the given kinds, whichever member raised it (another member, or the source whose
 * snapshot this etcd was restored from); returns how many there were.
 */
export async function clearAlarms(
  endpoint: string,
  kinds: readonly WriteAlarm[],
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<number> {
  const raised = (await alarms(endpoint, timeoutMs)).filter((a) => (kinds as readonly string[]).includes(a.alarm));
  for (const a of raised)
    await call(
      endpoint,
      '/v3/maintenance/alarm',
      { action: 'DEACTIVATE', memberID: a.memberId, alarm: a.alarm },
      timeoutMs,
    );
  return raised.length;
}

/** `NOSPACE` in the name of the member behind `endpoint`: the write guard's stall. */
export function raiseNoSpace(endpoint: string, timeoutMs = DEFAULT_TIMEOUT_MS, memberId?: string): Promise<void> {
  return raiseAlarm(endpoint, 'NOSPACE', timeoutMs, memberId);
}

/**
 * Clears every `NOSPACE` alarm. Harmless when the database really is full: etcd checks its quota before
 * every put and raises the alarm again.
 */
export function clearNoSpace(endpoint: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<number> {
  return clearAlarms(endpoint, ['NOSPACE'], timeoutMs);
}

/**
 * Clears both alarms our sidecars raise (the write guard's `NOSPACE`, the fence's `CORRUPT`): for an etcd
 * restored from a snapshot that may carry them, before it replays or serves. etcd raises `CORRUPT` itself
 * only with its corruption checks, which our etcds do not run.
 */
export function clearWriteAlarms(endpoint: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<number> {
  return clearAlarms(endpoint, ['NOSPACE', 'CORRUPT'], timeoutMs);
}

/** The IDs of every lease etcd holds (decimal int64), whether or not keys are attached. */
export async function leaseIds(endpoint: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<string[]> {
  const res = await call<{ leases?: { ID?: string }[] }>(endpoint, '/v3/lease/leases', {}, timeoutMs);
  return (res.leases ?? []).map((l) => l.ID ?? '0').filter((id) => id !== '0');
}

export interface LeaseState {
  /** The TTL the lease was granted with (s); keep-alives renew it to this. */
  readonly grantedTtl: number;
  /** What is left of it (s). */
  readonly remainingTtl: number;
  /** The keys attached (only when asked for). */
  readonly keys: readonly string[];
}

/** A lease's granted and remaining TTL (and its keys, base64, when asked); undefined when etcd holds no such lease. */
export async function leaseTimeToLive(
  endpoint: string,
  id: string,
  options: { keys?: boolean; timeoutMs?: number } = {},
): Promise<LeaseState | undefined> {
  const res = await call<{ TTL?: string; grantedTTL?: string; keys?: string[] }>(
    endpoint,
    '/v3/lease/timetolive',
    { ID: id, ...(options.keys ? { keys: true } : {}) },
    options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  );
  const remaining = Number(res.TTL ?? -1);
  if (remaining < 0) return undefined;
  return { grantedTtl: Number(res.grantedTTL ?? 0), remainingTtl: remaining, keys: res.keys ?? [] };
}

/** One keep-alive: the lease's TTL starts again from its granted TTL. Returns that TTL, or undefined when the lease is gone. */
export async function leaseKeepAlive(
  endpoint: string,
  id: string,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<number | undefined> {
  const res = await call<{ result?: { TTL?: string } }>(endpoint, '/v3/lease/keepalive', { ID: id }, timeoutMs);
  const ttl = Number(res.result?.TTL ?? 0);
  return ttl > 0 ? ttl : undefined;
}
