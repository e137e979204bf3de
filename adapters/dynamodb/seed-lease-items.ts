import { createHash } from 'node:crypto';
import type { SeedLease } from '../../core/garden/seed-lease.js';
import type { HostedControlPlane } from '../../core/model/seed.js';
import { itemSize } from './item-size.js';
import { seedLeaseKey, seedReportKey, SEED_REPORT_PREFIX } from './keys.js';

/**
 * How a seed's lease is stored: the lease itself (renewal, conditions: small, written by every heartbeat)
 * apart from the agent's report of the control planes it hosts (a few KB per plane: 100 KB and more on a
 * busy seed), which is written only when it changed. Every heartbeat rewriting the whole report was most of
 * the garden's DynamoDB writes at fleet scale, and a single item could not hold more than about 150 planes
 * (DynamoDB's 400 KB an item): the report is split into chunks of at most `REPORT_CHUNK_BYTES` by DynamoDB's
 * own measure, so that a plane reporting many pods makes more chunks rather than an item DynamoDB refuses.
 * The heartbeat's body limit (`HEARTBEAT_MAX_BODY_BYTES`) keeps a whole report, written in one transaction
 * with its lease, within DynamoDB's 4 MB a transaction.
 *
 * What "changed" means: anything but the internal probes' times, which move on every heartbeat. Those are
 * kept as one figure on the lease instead, `probedAt`, the earliest probe time of the heartbeat, and every
 * plane's probe time reads as no later than that when the report is joined back (`joinLease`): never fresher
 * than the agent's own time for it, which is what the watchdog's staleness rule needs (docs/design.md
 * section 8: an internal result is as old as the agent's probe, bounded by the heartbeat that carried it).
 */
export const REPORT_CHUNK_BYTES = 300 * 1024;

export interface LeaseItems {
  lease: Record<string, unknown>;
  /** The report's chunks, in order; none when the seed hosts nothing. */
  report: Record<string, unknown>[];
  digest: string;
}

/** The report without what changes on every heartbeat. */
function stable(plane: HostedControlPlane): HostedControlPlane {
  if (plane.internalProbeTime === undefined) return plane;
  const { internalProbeTime: _time, ...rest } = plane;
  return { ...rest, internalProbeTime: 'probed' };
}

export function reportDigest(planes: readonly HostedControlPlane[]): string {
  return createHash('sha256')
    .update(JSON.stringify(planes.map(stable)))
    .digest('base64url');
}

/** The earliest internal probe time of a heartbeat's planes (undefined when none reports one). */
function earliestProbe(planes: readonly HostedControlPlane[]): string | undefined {
  let earliest: string | undefined;
  for (const p of planes) {
    if (p.internalProbeTime === undefined || Number.isNaN(Date.parse(p.internalProbeTime))) continue;
    if (earliest === undefined || Date.parse(p.internalProbeTime) < Date.parse(earliest))
      earliest = p.internalProbeTime;
  }
  return earliest;
}

/** Planes in order, in runs of at most `REPORT_CHUNK_BYTES` (a plane larger than that alone in its run). */
function chunked(planes: readonly HostedControlPlane[]): HostedControlPlane[][] {
  const chunks: HostedControlPlane[][] = [];
  let size = 0;
  for (const plane of planes) {
    const bytes = itemSize({ plane }) + 1;
    if (chunks.length === 0 || size + bytes > REPORT_CHUNK_BYTES) {
      chunks.push([]);
      size = 0;
    }
    chunks.at(-1)!.push(plane);
    size += bytes;
  }
  return chunks;
}

export function leaseItems(lease: SeedLease): LeaseItems {
  const { controlPlanes, ...rest } = lease;
  const digest = reportDigest(controlPlanes);
  const probedAt = earliestProbe(controlPlanes);
  const report = chunked(controlPlanes).map((planes, index) => ({
    ...seedReportKey(lease.seed, index),
    type: 'SeedReport',
    reportDigest: digest,
    planes,
  }));
  return {
    lease: {
      ...seedLeaseKey(lease.seed),
      type: 'SeedLease',
      controlPlaneCount: controlPlanes.length,
      reportChunks: report.length,
      reportDigest: digest,
      ...(probedAt ? { probedAt } : {}),
      doc: rest,
    },
    report,
    digest,
  };
}

/**
 * Whether these chunks hold the whole report the lease names. A transaction writes a new report with its
 * lease, but a read of the lease and then of its chunks (or a query of the partition, which DynamoDB
 * isolates per item only) can fall between two heartbeats: the lease of one report beside chunks of the
 * next. Such a read is incomplete and must be read again, or a reader would see planes missing.
 */
export function reportComplete(
  lease: Record<string, unknown> | undefined,
  chunks: readonly Record<string, unknown>[],
): boolean {
  if (!lease || (lease.doc as { controlPlanes?: unknown }).controlPlanes) return true;
  const count = Number(lease.reportChunks ?? 0);
  const held = new Set(
    chunks
      .filter((c) => String(c.sk).startsWith(SEED_REPORT_PREFIX) && c.reportDigest === lease.reportDigest)
      .map((c) => String(c.sk)),
  );
  return held.size >= count;
}

const later = (a: string, b: string) => (Date.parse(a) >= Date.parse(b) ? a : b);

/**
 * The lease as the heartbeat wrote it, from its item and the report's chunks (items of its partition whose
 * sort key begins with the report prefix; extra chunks of an older, longer report are ignored). A lease
 * stored whole, before the report was split off, is read as it is.
 */
export function joinLease(
  lease: Record<string, unknown> | undefined,
  chunks: readonly Record<string, unknown>[],
  options: { controlPlanes: boolean },
): SeedLease | undefined {
  if (!lease) return undefined;
  const doc = lease.doc as Omit<SeedLease, 'controlPlanes'> & { controlPlanes?: HostedControlPlane[] };
  if (!options.controlPlanes) return { ...doc, controlPlanes: [] };
  if (doc.controlPlanes) return doc as SeedLease;
  const count = Number(lease.reportChunks ?? 0);
  const digest = lease.reportDigest;
  const planes = chunks
    .filter((c) => String(c.sk).startsWith(SEED_REPORT_PREFIX) && c.reportDigest === digest)
    .sort((a, b) => (String(a.sk) < String(b.sk) ? -1 : 1))
    .slice(0, count)
    .flatMap((c) => c.planes as HostedControlPlane[]);
  const probedAt = typeof lease.probedAt === 'string' ? lease.probedAt : undefined;
  return {
    ...doc,
    controlPlanes: probedAt
      ? planes.map((p) => (p.internalProbeTime ? { ...p, internalProbeTime: later(p.internalProbeTime, probedAt) } : p))
      : planes,
  };
}
