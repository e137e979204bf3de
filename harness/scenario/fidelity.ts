import { Etcd3 } from 'etcd3';

/**
 * What a client can read of a key and of a lease, for the fidelity checks (docs/design.md section 4,
 * "Fidelity"): after a restore or a migration every key carries the value, revisions, version and lease
 * it had on the source at the same revision, and every lease it is attached to is live with the same ID.
 */

export interface KeyFacts {
  readonly value: string;
  readonly createRevision: number;
  readonly modRevision: number;
  readonly version: number;
  /** Decimal lease ID; '0' for none. */
  readonly lease: string;
}

export interface LeaseFacts {
  readonly grantedTtl: number;
  readonly remainingTtl: number;
  readonly keys: readonly string[];
}

function client(endpoint: string): Etcd3 {
  return new Etcd3({ hosts: endpoint, grpcOptions: { 'grpc.max_receive_message_length': 512 * 1024 * 1024 } });
}

/** Every key under `prefix` (all keys by default) at `revision` (default: now): key -> facts. */
export async function readKeySpace(
  endpoint: string,
  options: { prefix?: string; revision?: number } = {},
): Promise<{ revision: number; keys: Map<string, KeyFacts> }> {
  const c = client(endpoint);
  try {
    const key = Buffer.from(options.prefix ?? '\0');
    const res = await c.kv.range({
      key,
      range_end: options.prefix === undefined ? Buffer.from([0]) : prefixEnd(key),
      ...(options.revision === undefined ? {} : { revision: String(options.revision) }),
    });
    return {
      revision: Number(res.header.revision),
      keys: new Map(
        res.kvs.map((kv) => [
          kv.key.toString(),
          {
            value: kv.value.toString(),
            createRevision: Number(kv.create_revision),
            modRevision: Number(kv.mod_revision),
            version: Number(kv.version),
            lease: String(kv.lease || '0'),
          },
        ]),
      ),
    };
  } finally {
    c.close();
  }
}

/** Every lease etcd holds: ID -> granted and remaining TTL and attached keys. */
export async function readLeases(endpoint: string): Promise<Map<string, LeaseFacts>> {
  const c = client(endpoint);
  try {
    const { leases } = await c.leaseClient.leaseLeases();
    const out = new Map<string, LeaseFacts>();
    for (const { ID } of leases) {
      const ttl = await c.leaseClient.leaseTimeToLive({ ID, keys: true });
      if (Number(ttl.TTL) < 0) continue;
      out.set(String(ID), {
        grantedTtl: Number(ttl.grantedTTL),
        remainingTtl: Number(ttl.TTL),
        keys: ttl.keys.map((k) => Buffer.from(k).toString()).sort(),
      });
    }
    return out;
  } finally {
    c.close();
  }
}

/** Grants a lease of `ttl` seconds and puts `count` keys under `prefix` attached to it; returns its ID and the keys as written. */
export async function putLeasedKeys(
  endpoint: string,
  input: { prefix: string; count: number; ttl: number; id?: string },
): Promise<{ lease: string; keys: Map<string, KeyFacts> }> {
  const c = client(endpoint);
  try {
    const granted = await c.leaseClient.leaseGrant({ TTL: input.ttl, ID: input.id ?? 0 });
    const lease = String(granted.ID);
    for (let i = 0; i < input.count; i++)
      await c.kv.put({
        key: Buffer.from(`${input.prefix}${String(i).padStart(3, '0')}`),
        value: Buffer.from(`v${i}`),
        lease,
      });
  } finally {
    c.close();
  }
  const { keys } = await readKeySpace(endpoint, { prefix: input.prefix });
  return { lease: [...keys.values()][0]?.lease ?? '0', keys };
}

export interface FidelityReport {
  /** Keys the expectation holds that the destination lacks. */
  readonly missing: string[];
  /** Keys the destination holds that the expectation does not (under the prefixes compared). */
  readonly unexpected: string[];
  /** Keys whose facts differ: key, what was expected, what was found. */
  readonly changed: { key: string; expected: KeyFacts; found: KeyFacts }[];
  /** Leases the expected keys are attached to that are not live on the destination. */
  readonly deadLeases: string[];
  /** Live leases whose TTL is outside [0, granted] or whose granted TTL differs from the source's. */
  readonly wrongTtl: { lease: string; expectedGranted?: number; found: LeaseFacts }[];
}

/**
 * Compares what the destination holds (keys, leases) with what it must hold: `expected` keys exactly (and
 * nothing else within `prefixes`), each with its lease live, with the source's granted TTL where given.
 */
export function fidelityReport(input: {
  expected: ReadonlyMap<string, KeyFacts>;
  found: ReadonlyMap<string, KeyFacts>;
  leases: ReadonlyMap<string, LeaseFacts>;
  grantedTtls?: ReadonlyMap<string, number>;
}): FidelityReport {
  const missing: string[] = [];
  const changed: FidelityReport['changed'] = [];
  const dead = new Set<string>();
  for (const [key, expected] of input.expected) {
    const found = input.found.get(key);
    if (found === undefined) {
      missing.push(key);
      continue;
    }
    if (JSON.stringify(found) !== JSON.stringify(expected)) changed.push({ key, expected, found });
    if (expected.lease !== '0' && !input.leases.has(expected.lease)) dead.add(expected.lease);
  }
  const unexpected = [...input.found.keys()].filter((k) => !input.expected.has(k));
  const wrongTtl: FidelityReport['wrongTtl'] = [];
  for (const [lease, facts] of input.leases) {
    const expectedGranted = input.grantedTtls?.get(lease);
    const outside = facts.remainingTtl < 0 || facts.remainingTtl > facts.grantedTtl;
    if (outside || (expectedGranted !== undefined && facts.grantedTtl !== expectedGranted))
      wrongTtl.push({ lease, ...(expectedGranted === undefined ? {} : { expectedGranted }), found: facts });
  }
  return { missing, unexpected, changed, deadLeases: [...dead], wrongTtl };
}

/** The report of a perfect copy: what a test expects `fidelityReport` to return. */
export const FAITHFUL: FidelityReport = { missing: [], unexpected: [], changed: [], deadLeases: [], wrongTtl: [] };

function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i] = end[i]! + 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

/** Keys on a 30-minute lease, and keys of a lease that expired before whatever comes next (a migration, a restore). */
export interface LeasedFixture {
  readonly prefix: string;
  readonly lease: string;
  /** The leased keys as the source wrote them. */
  readonly keys: ReadonlyMap<string, KeyFacts>;
  readonly expiredLease: string;
  /** The source's revision once the expired lease's keys were deleted: a backup must reach it. */
  readonly revision: number;
}

/** The 30-minute lease of the fixture: Kubernetes attaches Events to a lease of `--event-ttl` (1 h by default). */
export const FIXTURE_LEASE_TTL = 30 * 60;

/**
 * Writes the fixture through `endpoint` (the serving source): 20 keys on a 30-minute lease, and 3 keys on
 * a lease of 2 s, which is left to expire (its keys' deletes are one revision) before this returns.
 */
export async function writeLeasedFixture(endpoint: string, prefix: string): Promise<LeasedFixture> {
  const live = await putLeasedKeys(endpoint, { prefix: `${prefix}/leased/`, count: 20, ttl: FIXTURE_LEASE_TTL });
  const expired = await putLeasedKeys(endpoint, { prefix: `${prefix}/expired/`, count: 3, ttl: 2 });
  const deadline = Date.now() + 20_000;
  while ((await readLeases(endpoint)).has(expired.lease)) {
    if (Date.now() > deadline) throw new Error(`lease ${expired.lease} did not expire within 20 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const { revision } = await readKeySpace(endpoint, { prefix: `${prefix}/` });
  return { prefix, lease: live.lease, keys: live.keys, expiredLease: expired.lease, revision };
}

export interface LeasedFixtureReport extends FidelityReport {
  /** Keys of the expired lease that came back. */
  readonly resurrected: string[];
  readonly expiredLeaseLive: boolean;
}

/** What a faithful copy of the fixture reports. */
export const FAITHFUL_FIXTURE: LeasedFixtureReport = { ...FAITHFUL, resurrected: [], expiredLeaseLive: false };

/**
 * The fixture as `endpoint` holds it: every leased key with its value, create and mod revision, version
 * and lease as written, the lease live with its ID and granted TTL (remaining at most that); the expired
 * lease and its keys gone.
 */
export async function checkLeasedFixture(endpoint: string, fixture: LeasedFixture): Promise<LeasedFixtureReport> {
  const [leased, expired, leases] = await Promise.all([
    readKeySpace(endpoint, { prefix: `${fixture.prefix}/leased/` }),
    readKeySpace(endpoint, { prefix: `${fixture.prefix}/expired/` }),
    readLeases(endpoint),
  ]);
  const report = fidelityReport({
    expected: fixture.keys,
    found: leased.keys,
    leases: new Map([...leases].filter(([id]) => id === fixture.lease)),
    grantedTtls: new Map([[fixture.lease, FIXTURE_LEASE_TTL]]),
  });
  return { ...report, resurrected: [...expired.keys.keys()], expiredLeaseLive: leases.has(fixture.expiredLease) };
}

/**
 * Every acknowledged write the destination holds carries the revision it was acknowledged with as its
 * create and mod revision, and version 1 (each writer key is written once): the revisions of the history
 * went along with the values. Returns the keys that do not.
 */
export async function writesWithOtherRevisions(
  endpoint: string,
  input: { prefix: string; acknowledged: readonly { key: string; revision: number }[] },
): Promise<{ key: string; revision: number; found: KeyFacts }[]> {
  const { keys } = await readKeySpace(endpoint, { prefix: input.prefix });
  return input.acknowledged.flatMap((w) => {
    const found = keys.get(w.key);
    if (found === undefined) return [];
    const same = found.createRevision === w.revision && found.modRevision === w.revision && found.version === 1;
    return same ? [] : [{ key: w.key, revision: w.revision, found }];
  });
}
