import type { Seed } from '../model/seed.js';
import type { Shoot } from '../model/shoot.js';
import type { ApiRecord } from './api-records.js';
import { describeTarget, recordTargetFor, sameTarget } from './record-target.js';

export type ApiRecordAuditReason =
  /** The record points at a load balancer no seed hosting the shoot reports (another seed's, or an unknown one). */
  | 'ApiRecordPointsElsewhere'
  /** The placed seed serves the shoot, and it has no API record. */
  | 'ApiRecordMissing';

export interface ApiRecordFinding {
  readonly project: string;
  readonly shoot: string;
  readonly record: string;
  readonly target: string | null;
  /** The seed whose load balancer the record names, when one reports it. */
  readonly pointsAt: string | null;
  readonly seedName: string | null;
  readonly reason: ApiRecordAuditReason;
  readonly message: string;
}

export interface AuditApiRecordInput {
  readonly shoot: Shoot;
  readonly recordName: string;
  readonly record: ApiRecord | undefined;
  /** Seeds with fresh heartbeats only: a stale report is no evidence of what a seed hosts. */
  readonly seeds: ReadonlyMap<string, Seed>;
}

/**
 * The audit of one shoot's API record, a pure function: the record must name the load balancer a seed
 * hosting the shoot reports. Shoots in a migration are left out (the record follows the switch step, not
 * the placement); undefined means nothing to report.
 */
export function auditApiRecord(input: AuditApiRecordInput): ApiRecordFinding | undefined {
  const { shoot, record, seeds } = input;
  const op = shoot.status.lastOperation;
  if (op && (op.type === 'Migrate' || op.type === 'Restore') && op.state === 'Processing') return undefined;
  const technicalID = shoot.status.technicalID;
  const seedName = shoot.status.seedName ?? null;
  const hosting: { seed: string; target: ReturnType<typeof recordTargetFor>; active: boolean }[] = [];
  const addressOwners = new Map<string, string>();
  for (const seed of seeds.values()) {
    for (const cp of seed.status.controlPlanes ?? []) {
      const target = targetOf(cp.externalUrl);
      if (!target) continue;
      addressOwners.set(describeTarget(target), seed.metadata.name);
      if (cp.technicalID === technicalID) hosting.push({ seed: seed.metadata.name, target, active: cp.active });
    }
  }
  const base = { project: shoot.metadata.project, shoot: shoot.metadata.name, record: input.recordName, seedName };
  if (record === undefined) {
    const placed = hosting.find((h) => h.seed === seedName && h.active);
    if (!placed) return undefined;
    return {
      ...base,
      target: null,
      pointsAt: null,
      reason: 'ApiRecordMissing',
      message: `seed ${placed.seed} serves the control plane behind ${describeTarget(placed.target)}, but there is no API record ${input.recordName}`,
    };
  }
  if (hosting.some((h) => sameTarget(h.target, record))) return undefined;
  const target = describeTarget(record);
  const pointsAt = addressOwners.get(target) ?? null;
  const where = pointsAt ? `seed ${pointsAt}, which does not host the shoot` : 'an address no seed reports';
  return {
    ...base,
    target,
    pointsAt,
    reason: 'ApiRecordPointsElsewhere',
    message: `API record ${input.recordName} is ${target}: ${where}; the shoot is placed on ${seedName ?? 'no seed'}`,
  };
}

function targetOf(externalUrl: string | undefined) {
  if (!externalUrl) return undefined;
  try {
    return recordTargetFor(externalUrl);
  } catch {
    // A seed reporting an unusable address cannot be what a record points at; the heartbeat schema allows any URL.
    return undefined;
  }
}
