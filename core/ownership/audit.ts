import { apiDomainName } from '../dns/api-domain.js';
import type { ApiRecord, ApiRecords } from '../dns/api-records.js';
import { auditApiRecord, type ApiRecordFinding } from '../dns/audit.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { mergeConditions } from '../garden/conditions.js';
import { leaseExpired } from '../garden/seed-lease.js';
import type { Clock, EventSink } from '../garden/context.js';
import type { GardenRepository } from '../garden/repository.js';
import type { Condition } from '../model/common.js';
import type { Seed } from '../model/seed.js';
import type { Shoot } from '../model/shoot.js';
import { MAX_OWNER_RECORDS_PAGE_SIZE, type OwnerRecord, type OwnerRecords } from './owner-records.js';
import { ownerRecordName } from './record-name.js';

/**
 * The ownership audit: for every shoot, the owner record versus the identity of the seed in
 * `status.seedName` versus what seed heartbeats report as active. A disagreement publishes
 * `SplitBrainSuspected` and sets the shoot condition `OwnershipConsistent` to False.
 */

export const OWNERSHIP_CONDITION = 'OwnershipConsistent';
export const SPLIT_BRAIN_EVENT = 'SplitBrainSuspected';

export type AuditReason =
  | 'Consistent'
  /** More than one seed reports the control plane active. */
  | 'ActiveOnSeveralSeeds'
  /** A seed other than `status.seedName` reports it active. */
  | 'ActiveOnOtherSeed'
  /** The shoot is placed on a seed and has no owner record. */
  | 'OwnerRecordMissing'
  /** The owner record names another identity than the placed seed's. */
  | 'OwnerRecordMismatch'
  /** `status.seedName` names a seed the garden does not know. */
  | 'SeedMissing';

export interface AuditFinding {
  readonly project: string;
  readonly shoot: string;
  readonly technicalID: string;
  readonly recordName: string;
  readonly seedName: string | null;
  readonly expectedIdentity: string | null;
  readonly ownerRecord: string | null;
  /** Seeds whose fresh heartbeat (lease not expired) reports the control plane active. */
  readonly activeOn: readonly string[];
  readonly consistent: boolean;
  readonly reason: AuditReason;
  readonly message: string;
}

export interface AuditShootInput {
  readonly shoot: Shoot;
  readonly recordName: string;
  readonly record: OwnerRecord | undefined;
  readonly seeds: ReadonlyMap<string, Seed>;
  readonly activeOn: readonly string[];
}

/** The seeds that report a shoot's control plane although it is placed elsewhere, past the bound since it moved. */
export function leftoversOf(shoot: Shoot, reportedBy: readonly string[], now: Date, boundMs: number): Leftover[] {
  if (migrating(shoot)) return [];
  const placedOn = shoot.status.seedName ?? null;
  const last = shoot.status.lastOperation;
  const since =
    last && (last.type === 'Restore' || last.type === 'Migrate') && last.state === 'Succeeded'
      ? last.lastUpdateTime
      : null;
  if (since !== null && now.getTime() - Date.parse(since) <= boundMs) return [];
  return reportedBy
    .filter((seed) => seed !== placedOn)
    .map((seed) => ({
      seed,
      technicalID: shoot.status.technicalID,
      project: shoot.metadata.project,
      shoot: shoot.metadata.name,
      placedOn,
      since,
    }));
}

/** Shoots in the middle of a migration legitimately have a record that names the destination while `status.seedName` is the source. */
export function migrating(shoot: Shoot): boolean {
  const op = shoot.status.lastOperation;
  return op !== undefined && (op.type === 'Migrate' || op.type === 'Restore') && op.state === 'Processing';
}

/** The audit of one shoot, a pure function; undefined for a shoot with nothing to compare (unscheduled, no record, active nowhere). */
export function auditShoot(input: AuditShootInput): AuditFinding | undefined {
  const { shoot, record, seeds, activeOn } = input;
  const seedName = shoot.status.seedName ?? null;
  if (seedName === null && record === undefined && activeOn.length === 0) return undefined;
  const seed = seedName === null ? undefined : seeds.get(seedName);
  const base = {
    project: shoot.metadata.project,
    shoot: shoot.metadata.name,
    technicalID: shoot.status.technicalID,
    recordName: input.recordName,
    seedName,
    expectedIdentity: seed?.status.identity ?? null,
    ownerRecord: record?.value ?? null,
    activeOn: [...activeOn].sort(),
  };
  const finding = (reason: AuditReason, message: string): AuditFinding => ({
    ...base,
    consistent: reason === 'Consistent',
    reason,
    message,
  });

  if (activeOn.length > 1)
    return finding('ActiveOnSeveralSeeds', `seeds ${base.activeOn.join(', ')} all report the control plane active`);
  // During a migration, only two active control planes are a disagreement: the record moves first, the placement last.
  if (migrating(shoot))
    return finding('Consistent', 'migration in progress; at most one seed reports the control plane active');
  if (seedName === null) {
    return activeOn.length > 0
      ? finding('ActiveOnOtherSeed', `seed ${activeOn[0]} reports the control plane of an unplaced shoot active`)
      : finding('OwnerRecordMismatch', `the unplaced shoot has an owner record naming ${record?.value}`);
  }
  if (seed === undefined) return finding('SeedMissing', `status.seedName names seed ${seedName}, which does not exist`);
  if (record === undefined)
    return finding(
      'OwnerRecordMissing',
      `no owner record ${input.recordName}; seed ${seedName} (${seed.status.identity}) hosts the shoot`,
    );
  if (record.value !== seed.status.identity) {
    return finding(
      'OwnerRecordMismatch',
      `owner record names ${record.value}, but the shoot is placed on seed ${seedName} (${seed.status.identity})`,
    );
  }
  if (activeOn.length === 1 && activeOn[0] !== seedName) {
    return finding(
      'ActiveOnOtherSeed',
      `seed ${activeOn[0]} reports the control plane active, but it is placed on and owned by seed ${seedName}`,
    );
  }
  return finding('Consistent', `owner record, placement and heartbeats agree on seed ${seedName}`);
}

export interface OwnershipAuditOptions {
  readonly repository: GardenRepository;
  readonly records: OwnerRecords;
  readonly events: EventSink;
  readonly clock: Clock;
  readonly internalDomain: string;
  /** Heartbeats older than this are not evidence of what a seed serves now, even within a long lease. Default 5 min. */
  readonly heartbeatMaxAgeMs?: number;
  /** Items per repository page. Default 500. */
  readonly pageSize?: number;
  /** See DEFAULT_LEFTOVER_BOUND_MS. */
  readonly leftoverBoundMs?: number;
  /** The shoots' API records: each must point at a seed that hosts the shoot. Absent: not audited. */
  readonly apiRecords?: { readonly records: ApiRecords; readonly externalDomain: string };
}

export interface OwnershipAuditReport {
  readonly shoots: number;
  readonly audited: number;
  readonly consistent: number;
  readonly inconsistent: number;
  readonly eventsPublished: number;
  readonly conditionsWritten: number;
  /** Condition writes that lost a race with another writer: the next audit tries again. */
  readonly conflicts: number;
  readonly ownerRecords: number;
  readonly recordPages: number;
  readonly staleSeeds: readonly string[];
  /** The disagreements only. */
  readonly findings: readonly AuditFinding[];
  /** Control planes still reported by a seed that does not host the shoot, longer than the leftover bound after the shoot moved. */
  readonly leftovers: readonly Leftover[];
  /** API records that point at a seed that does not host the shoot (or are missing while the placed seed serves). */
  readonly apiRecordFindings: readonly ApiRecordFinding[];
}

/** A control plane left on a seed the shoot moved away from (its agent removes it once released). */
export interface Leftover {
  readonly seed: string;
  readonly technicalID: string;
  readonly project: string;
  readonly shoot: string;
  /** Where the shoot is placed now. */
  readonly placedOn: string | null;
  /** When the shoot's placement last changed (its migration ended), if known. */
  readonly since: string | null;
}

/**
 * How long a source may keep its leftover after a migration ended before the audit reports it: its agent
 * removes it one heartbeat (10 s by default) after the release; two minutes leave room for a slow stop.
 */
export const DEFAULT_LEFTOVER_BOUND_MS = 2 * 60_000;

export const DEFAULT_HEARTBEAT_MAX_AGE_MS = 5 * 60_000;

/**
 * One audit round. Reads every seed, every owner record (300 a call) and every shoot (in pages), so its
 * cost grows with pages, not with shoots. Events and condition writes happen only when a shoot's
 * finding changes (a new disagreement, a different reason, or a recovery), so a consistent fleet
 * causes no writes; the event goes out before the condition, so a failed publish is retried next round.
 */
export async function runOwnershipAudit(options: OwnershipAuditOptions): Promise<OwnershipAuditReport> {
  const now = options.clock.now();
  const pageSize = options.pageSize ?? 500;
  const maxAge = options.heartbeatMaxAgeMs ?? DEFAULT_HEARTBEAT_MAX_AGE_MS;

  const seeds = new Map<string, Seed>();
  for await (const seed of pages((page) => options.repository.listSeeds(page), pageSize))
    seeds.set(seed.metadata.name, seed);
  const activeByTechnicalID = new Map<string, string[]>();
  const hostedOn = new Map<string, string[]>();
  const staleSeeds: string[] = [];
  const freshSeeds = new Map<string, Seed>();
  for (const seed of seeds.values()) {
    const beat = seed.status.lastHeartbeatTime === undefined ? Number.NaN : Date.parse(seed.status.lastHeartbeatTime);
    // A seed whose lease expired is silent: its last report says what it served then, not now. Counting it
    // would call every bad-case migration a split brain (the lost source's last report still says active
    // when the destination activates); the sidecars' fence is what keeps that source from serving, and its
    // first fresh heartbeat is evidence again.
    if (!(now.getTime() - beat <= maxAge) || leaseExpired(seed, now)) {
      if ((seed.status.controlPlanes ?? []).some((cp) => cp.active)) staleSeeds.push(seed.metadata.name);
      continue;
    }
    freshSeeds.set(seed.metadata.name, seed);
    for (const cp of seed.status.controlPlanes ?? []) {
      const hosted = hostedOn.get(cp.technicalID) ?? [];
      hosted.push(seed.metadata.name);
      hostedOn.set(cp.technicalID, hosted);
      if (!cp.active) continue;
      const list = activeByTechnicalID.get(cp.technicalID) ?? [];
      list.push(seed.metadata.name);
      activeByTechnicalID.set(cp.technicalID, list);
    }
  }

  const records = new Map<string, OwnerRecord>();
  let recordPages = 0;
  let cursor: string | undefined;
  do {
    const page = await options.records.list({
      pageSize: MAX_OWNER_RECORDS_PAGE_SIZE,
      ...(cursor === undefined ? {} : { cursor }),
    });
    recordPages += 1;
    for (const record of page.records) records.set(record.name, record);
    cursor = page.next;
  } while (cursor !== undefined);
  const apiRecords = new Map<string, ApiRecord>();
  if (options.apiRecords)
    for (const record of await options.apiRecords.records.list()) apiRecords.set(record.name, record);
  const apiRecordFindings: ApiRecordFinding[] = [];

  let shoots = 0;
  let eventsPublished = 0;
  let conditionsWritten = 0;
  let conflicts = 0;
  let audited = 0;
  const findings: AuditFinding[] = [];
  const leftovers: Leftover[] = [];
  for await (const shoot of pages((page) => options.repository.listAllShoots(page), pageSize)) {
    shoots += 1;
    leftovers.push(
      ...leftoversOf(
        shoot,
        hostedOn.get(shoot.status.technicalID) ?? [],
        now,
        options.leftoverBoundMs ?? DEFAULT_LEFTOVER_BOUND_MS,
      ),
    );
    if (options.apiRecords) {
      const apiName = apiDomainName({
        shoot: shoot.metadata.name,
        project: shoot.metadata.project,
        externalDomain: options.apiRecords.externalDomain,
      });
      const apiFinding = auditApiRecord({
        shoot,
        recordName: apiName,
        record: apiRecords.get(apiName),
        seeds: freshSeeds,
      });
      if (apiFinding) apiRecordFindings.push(apiFinding);
    }
    const recordName = ownerRecordName({
      shoot: shoot.metadata.name,
      project: shoot.metadata.project,
      internalDomain: options.internalDomain,
    });
    const finding = auditShoot({
      shoot,
      recordName,
      record: records.get(recordName),
      seeds,
      activeOn: activeByTechnicalID.get(shoot.status.technicalID) ?? [],
    });
    if (finding === undefined) continue;
    audited += 1;
    if (!finding.consistent) findings.push(finding);
    const current = shoot.status.conditions.find((c) => c.type === OWNERSHIP_CONDITION);
    const wanted: Condition = {
      type: OWNERSHIP_CONDITION,
      status: finding.consistent ? 'True' : 'False',
      reason: finding.reason,
      message: finding.message.slice(0, 1024),
    };
    const changed =
      current === undefined
        ? !finding.consistent
        : current.status !== wanted.status || current.reason !== wanted.reason;
    if (!changed) continue;
    if (!finding.consistent) {
      await options.events.publish(SPLIT_BRAIN_EVENT, { ...finding, detectedAt: now.toISOString() });
      eventsPublished += 1;
    }
    const updated: Shoot = {
      ...shoot,
      status: { ...shoot.status, conditions: mergeConditions(shoot.status.conditions, [wanted], now.toISOString()) },
    };
    try {
      await options.repository.updateShoot(updated, shoot.metadata.resourceVersion);
      conditionsWritten += 1;
    } catch (error) {
      // Someone changed or deleted the shoot since it was read; the next round sees the new state.
      if (error instanceof ConflictError || error instanceof NotFoundError) conflicts += 1;
      else throw error;
    }
  }
  return {
    shoots,
    audited,
    consistent: audited - findings.length,
    inconsistent: findings.length,
    eventsPublished,
    conditionsWritten,
    conflicts,
    ownerRecords: records.size,
    recordPages,
    staleSeeds,
    findings,
    leftovers,
    apiRecordFindings,
  };
}

async function* pages<T>(
  list: (page: { limit: number; continue?: string }) => Promise<{ items: T[]; continue?: string }>,
  limit: number,
): AsyncGenerator<T> {
  let token: string | undefined;
  do {
    const page = await list({ limit, ...(token === undefined ? {} : { continue: token }) });
    yield* page.items;
    token = page.continue;
  } while (token !== undefined);
}
