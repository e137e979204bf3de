/**
 * The single-table layout of the garden state.
 *
 * | item   | pk                | sk      | kind-index (kind, id)       | seed-index (seedName, id) |
 * | ------ | ----------------- | ------- | --------------------------- | ------------------------- |
 * | Seed   | `SEED#<name>`     | `SEED`  | `Seed`, `<name>`            | -                         |
 * | SeedLease | `SEED#<name>`  | `LEASE` | -                           | -                         |
 * | SeedReport | `SEED#<name>` | `REPORT#<nnn>` | -                    | -                         |
 * | Shoot  | `SHOOT#<p>#<n>`   | `SHOOT` | `Shoot`, `<p>/<n>`          | `<seed>`, `<p>/<n>`       |
 * | ShootState | `SHOOTSTATE#<p>#<n>` | `SHOOTSTATE` | -                  | -                         |
 * | LostLease | `LEASEMONITOR`  | `SEED#<name>` | -                     | -                         |
 * | SourceWait | `SOURCEWAIT#<seed>` | `SHOOT#<p>#<n>` | -               | -                         |
 *
 * Listing a project's shoots queries `project-index` (project, name).
 */
export const TABLE_INDEXES = {
  kind: { name: 'kind-index', partitionKey: 'kind', sortKey: 'id' },
  seed: { name: 'seed-index', partitionKey: 'seedName', sortKey: 'id' },
  project: { name: 'project-index', partitionKey: 'project', sortKey: 'name' },
} as const;

export const seedKey = (name: string) => ({ pk: `SEED#${name}`, sk: 'SEED' });
export const seedLeaseKey = (name: string) => ({ pk: `SEED#${name}`, sk: 'LEASE' });
/** The sort keys of a seed's report chunks (the control planes its agent reported, seed-lease-items.ts). */
export const SEED_REPORT_PREFIX = 'REPORT#';
export const seedReportKey = (name: string, chunk: number) => ({
  pk: `SEED#${name}`,
  sk: `${SEED_REPORT_PREFIX}${String(chunk).padStart(3, '0')}`,
});
export const shootKey = (project: string, name: string) => ({ pk: `SHOOT#${project}#${name}`, sk: 'SHOOT' });
export const shootStateKey = (project: string, name: string) => ({
  pk: `SHOOTSTATE#${project}#${name}`,
  sk: 'SHOOTSTATE',
});
/** The lease monitor's memory of one seed's lost lease. */
export const lostLeaseKey = (seed: string) => ({ pk: 'LEASEMONITOR', sk: `SEED#${seed}` });
/** The latest evacuation of one seed (docs/design.md section 13). */
export const evacuationKey = (seed: string) => ({ pk: 'EVACUATION', sk: `SEED#${seed}` });
/** A mode-auto good-path step's task token, filed under its source seed. */
export const sourceWaitKey = (seed: string, project: string, name: string) => ({
  pk: `SOURCEWAIT#${seed}`,
  sk: `SHOOT#${project}#${name}`,
});
