import type { MigrationRecord } from '../migration/record.js';

/**
 * What one of an evacuation's `maxParallel` places holds: the restore, not the copy's wait (docs/design.md
 * section 13). A move holds its place from its claim until its destination holds the shoot's etcd restored
 * ahead and the owner record names the destination: from then on only the copy's wait for the final
 * snapshot (which counts from the owner change and, for a lost seed, from its lease's loss) and a catch-up
 * of the deltas since the restore ahead are left, and neither loads a destination or the garden. So the next
 * move starts then, and the waits of many moves of a dead seed run at once instead of wave after wave.
 * A move whose destination does not restore ahead (an HA cluster, the `kubernetes` runtime, a failed
 * pre-copy) restores in full after the wait and holds its place to its end.
 *
 * Returns when the migration let go of its place (the owner change), or undefined while it holds it.
 */
export function slotFreedAt(record: Pick<MigrationRecord, 'steps'>): string | undefined {
  const step = (id: string) => record.steps.find((s) => s.id === id);
  const owner = step('set-owner-destination');
  if (step('restore-etcd-ahead')?.state !== 'succeeded' || owner?.state !== 'succeeded') return undefined;
  return owner.endedAt;
}
