import type { DeltaEvent, DeltaLease } from './delta-format.js';
import { EtcdGatewayError } from './errors.js';
import { call, leaseIds, leaseKeepAlive, leaseTimeToLive } from './etcd-gateway.js';

/**
 * Leases across a backup and a restore (docs/design.md section 4, "Fidelity"). A lease is no revision:
 * etcd's grants, keep-alives and revocations make none, only the deletes a revocation or an expiry causes
 * do (one revision, which the watch shows as delete events). A full snapshot carries the leases (etcd's
 * lease bucket); a delta carries the lease of each put and the table of leases live at its end, from which
 * a replay grants the same IDs with the same TTLs before the puts that need them.
 */

/**
 * The TTL given to a lease a put names whose TTL the source could no longer read (revoked before its
 * sidecar asked): etcd raises it to its minimum (a few seconds). Its keys' deletes come in a later delta;
 * if that delta never comes (the source died), the keys go soon after the destination serves, as they did
 * on the source.
 */
export const UNKNOWN_LEASE_TTL = 1;

/** The granted TTLs the source's sidecar learned, by lease ID: a granted TTL never changes. */
export class LeaseTtls {
  private readonly ttls = new Map<string, number>();
  private readonly asking = new Set<string>();

  constructor(private readonly endpoint: () => string) {}

  /**
   * Asks etcd at once for the TTL of every lease these events name that it does not know yet, without
   * waiting: a lease revoked right after its put is then still readable. Never throws.
   */
  learn(events: readonly DeltaEvent[]): void {
    for (const e of events) {
      const id = e.lease;
      if (id === undefined || this.ttls.has(id) || this.asking.has(id)) continue;
      this.asking.add(id);
      void leaseTimeToLive(this.endpoint(), id, { timeoutMs: 1_000 })
        .then((state) => {
          if (state !== undefined) this.ttls.set(id, state.grantedTtl);
        })
        .catch(() => undefined)
        .finally(() => this.asking.delete(id));
    }
  }

  /**
   * The lease table of a delta: every lease etcd holds now (the delta's end, or a little later: a lease
   * granted after it costs nothing to grant early, and one revoked after it still has keys on the
   * destination and is kept), with its granted TTL; and every lease the events name that is gone, marked
   * so, with the TTL learned or `UNKNOWN_LEASE_TTL`. Leases gone are forgotten.
   */
  async table(events: readonly DeltaEvent[], endpoint = this.endpoint()): Promise<DeltaLease[]> {
    const live = await leaseIds(endpoint);
    const named = new Set(events.flatMap((e) => (e.lease === undefined ? [] : [e.lease])));
    const out = new Map<string, DeltaLease>();
    // The TTLs not known yet, a few at a time: a restarted sidecar meets every lease at once.
    const unknown = live.filter((id) => !this.ttls.has(id));
    for (let i = 0; i < unknown.length; i += 16)
      await Promise.all(
        unknown.slice(i, i + 16).map(async (id) => {
          const ttl = (await leaseTimeToLive(endpoint, id))?.grantedTtl;
          if (ttl !== undefined) this.ttls.set(id, ttl);
        }),
      );
    for (const id of live) {
      const ttl = this.ttls.get(id);
      // Revoked between the two calls: like any lease gone, it is in the table only if a put names it.
      if (ttl !== undefined) out.set(id, { id, ttl });
    }
    for (const id of named)
      if (!out.has(id)) out.set(id, { id, ttl: this.ttls.get(id) ?? UNKNOWN_LEASE_TTL, gone: true });
    const liveSet = new Set(live);
    for (const id of this.ttls.keys()) if (!liveSet.has(id) && !named.has(id)) this.ttls.delete(id);
    return [...out.values()].sort((a, b) => compareIds(a.id, b.id));
  }
}

function compareIds(a: string, b: string): number {
  const d = BigInt(a) - BigInt(b);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

/**
 * The leases side of a replay into a restored etcd: grants what a delta needs before its events (with the
 * source's IDs and TTLs), and at the end revokes the leases the source no longer had that have no key
 * left (an empty lease's revocation makes no revision; one with keys would delete them on a revision the
 * source never had, so such a lease stays: its keys' deletes are in a later delta, or were lost with it).
 * Only leases the restore knows (those of the restored data and those it granted) are ever revoked, never
 * one a client granted on a member that serves already.
 */
export class LeaseReplay {
  private known: Set<string> | undefined;

  constructor(private readonly endpoint: () => string) {}

  /** Grants every lease of `table` and every lease `events` name that etcd does not hold yet. */
  async grant(table: readonly DeltaLease[] | undefined, events: readonly DeltaEvent[]): Promise<number> {
    const known = (this.known ??= new Set(await leaseIds(this.endpoint())));
    const wanted = new Map<string, number>();
    for (const l of table ?? []) wanted.set(l.id, l.ttl);
    for (const e of events) if (e.lease !== undefined && !wanted.has(e.lease)) wanted.set(e.lease, UNKNOWN_LEASE_TTL);
    let granted = 0;
    for (const [id, ttl] of wanted) {
      if (known.has(id)) continue;
      try {
        await call(this.endpoint(), '/v3/lease/grant', { ID: id, TTL: ttl }, 5_000);
        granted += 1;
      } catch (error) {
        if (!(error instanceof EtcdGatewayError && /lease already exists/.test(error.message))) throw error;
      }
      known.add(id);
    }
    return granted;
  }

  /** Revokes the known leases `table` (the last delta's) does not list as live and that hold no key; undefined table: nothing known, nothing revoked. */
  async revokeGone(table: readonly DeltaLease[] | undefined): Promise<number> {
    if (table === undefined) return 0;
    const known = (this.known ??= new Set(await leaseIds(this.endpoint())));
    const listed = new Set(table.filter((l) => !l.gone).map((l) => l.id));
    let revoked = 0;
    for (const id of [...known]) {
      if (listed.has(id)) continue;
      const state = await leaseTimeToLive(this.endpoint(), id, { keys: true, timeoutMs: 5_000 });
      if (state !== undefined && state.keys.length > 0) continue;
      if (state !== undefined) {
        await call(this.endpoint(), '/v3/lease/revoke', { ID: id }, 5_000).catch((error: unknown) => {
          if (!(error instanceof EtcdGatewayError && /lease not found/.test(error.message))) throw error;
        });
        revoked += 1;
      }
      known.delete(id);
    }
    return revoked;
  }
}

/**
 * Keeps every lease of an etcd that does not serve yet alive (a restore, a replay, a standby waiting for
 * its catch-up): etcd counts a restored lease down from its full TTL as soon as it elects itself, and one
 * that expired there would delete its keys on a revision the source never had, which the replay would
 * then take for one of the source's. Each lease is renewed every third of its TTL (and at once when
 * first seen); an etcd that restarts or does not answer is simply tried again. Once etcd serves, the
 * hold stops and its leases run down from their full TTL, as after a leader change.
 */
export class LeaseHold {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly due = new Map<string, number>();

  constructor(
    private readonly endpoint: () => string,
    private readonly intervalMs = 250,
  ) {}

  get active(): boolean {
    return this.timer !== undefined;
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => {
      this.running ??= this.round().finally(() => (this.running = undefined));
    }, this.intervalMs);
    this.running ??= this.round().finally(() => (this.running = undefined));
  }

  /** One round now (the caller's replay just granted leases). */
  async renewNow(): Promise<void> {
    await this.running;
    await this.round();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    this.due.clear();
  }

  private async round(): Promise<void> {
    try {
      const endpoint = this.endpoint();
      const ids = await leaseIds(endpoint, 1_000);
      const now = performance.now();
      const live = new Set(ids);
      for (const id of this.due.keys()) if (!live.has(id)) this.due.delete(id);
      for (const id of ids) {
        if ((this.due.get(id) ?? 0) > now) continue;
        const ttl = await leaseKeepAlive(endpoint, id, 1_000);
        if (ttl === undefined) this.due.delete(id);
        else this.due.set(id, performance.now() + (ttl * 1_000) / 3);
      }
    } catch {
      // etcd restarts or does not answer yet: the next round tries again.
    }
  }
}
