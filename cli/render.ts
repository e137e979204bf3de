import type { Seed } from '../core/model/seed.js';
import type { Shoot } from '../core/model/shoot.js';

/** A plain aligned table, like kubectl's default output. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('   ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** kubectl's AGE: 45s, 12m, 5h, 3d. */
export function age(iso: string | undefined, now: Date): string {
  if (!iso) return '<unknown>';
  const s = Math.max(0, Math.round((now.getTime() - Date.parse(iso)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172_800) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86_400)}d`;
}

export interface SeedReadiness {
  ready: 'True' | 'False' | 'Unknown';
  /** The conditions that are not True, or why the seed counts as unknown. */
  reasons: string[];
}

/**
 * A seed is Ready when its lease holds (its agent heartbeated within the lease duration) and every
 * condition its agent reports is True; Unknown without a heartbeat or once the lease ran out (the API then
 * reports the conditions Unknown too), False when a condition is False.
 */
export function seedReadiness(seed: Seed, now: Date): SeedReadiness {
  const { conditions, lastHeartbeatTime, leaseDurationSeconds } = seed.status;
  if (!lastHeartbeatTime) return { ready: 'Unknown', reasons: ['NoHeartbeat'] };
  const expired = now.getTime() >= Date.parse(lastHeartbeatTime) + (leaseDurationSeconds ?? 30) * 1000;
  const notTrue = conditions.filter((c) => c.status !== 'True').map((c) => `${c.type}=${c.status}`);
  if (expired) return { ready: 'Unknown', reasons: ['LeaseExpired', ...notTrue] };
  if (conditions.length === 0) return { ready: 'Unknown', reasons: ['NoConditions'] };
  if (conditions.some((c) => c.status === 'False')) return { ready: 'False', reasons: notTrue };
  return { ready: notTrue.length > 0 ? 'Unknown' : 'True', reasons: notTrue };
}

export function seedTable(seeds: Seed[], options: { now: Date; wide?: boolean }): string {
  const headers = ['NAME', 'PROVIDER', 'REGION', 'SHOOTS', 'READY', 'MULTI-ZONAL', 'HEARTBEAT', 'AGE'];
  if (options.wide) headers.push('ZONES', 'BACKUP', 'NOT READY');
  return table(
    headers,
    seeds.map((s) => {
      const readiness = seedReadiness(s, options.now);
      const row = [
        s.metadata.name,
        s.spec.provider.type,
        s.spec.provider.region,
        `${s.status.shoots}/${s.spec.capacity?.shoots ?? '∞'}`,
        readiness.ready,
        s.status.labels['seed.gardener.cloud/multi-zonal'] ?? 'false',
        s.status.lastHeartbeatTime ? `${age(s.status.lastHeartbeatTime, options.now)} ago` : '<none>',
        age(s.metadata.creationTimestamp, options.now),
      ];
      if (options.wide)
        row.push(
          s.spec.provider.zones.join(','),
          s.spec.backup?.bucket ?? '<none>',
          readiness.reasons.join(',') || '<none>',
        );
      return row;
    }),
  );
}

export function shootTable(shoots: Shoot[], options: { now: Date; wide?: boolean; allProjects?: boolean }): string {
  const headers = [
    ...(options.allProjects ? ['PROJECT'] : []),
    'NAME',
    'SEED',
    'HA',
    'HIBERNATED',
    'LAST OPERATION',
    'AGE',
  ];
  if (options.wide) headers.push('PROVIDER', 'REGION', 'TECHNICAL ID', 'MIGRATION');
  return table(
    headers,
    shoots.map((s) => {
      const op = s.status.lastOperation;
      const row = [
        ...(options.allProjects ? [s.metadata.project] : []),
        s.metadata.name,
        s.status.seedName ?? '<unscheduled>',
        s.spec.controlPlane?.highAvailability?.failureTolerance.type ?? '-',
        String(s.spec.hibernation?.enabled ?? false),
        op ? `${op.type} ${op.state} ${op.progress}%` : '-',
        age(s.metadata.creationTimestamp, options.now),
      ];
      if (options.wide) {
        const migration = s.status.migration as { id?: string; state?: string } | undefined;
        row.push(s.spec.provider.type, s.spec.region, s.status.technicalID, migration?.state ?? '<none>');
      }
      return row;
    }),
  );
}

/** What `POST /scheduling/dry-run` answers. */
export interface DryRunResult {
  seedName?: string;
  strategy: string;
  eligible: number;
  total: number;
  summary: string;
  candidates: {
    name: string;
    rank: number;
    score: number;
    multiZonal: boolean;
    shoots: number;
    capacity: number | null;
    provider: string;
    region: string;
  }[];
  rejected: { seed: string; filter: string; reason: string }[];
}

/** `schedule dry-run`: the decision, the ranking and every rejection, as tables. */
export function scheduleTable(result: DryRunResult): string {
  const lines = [
    `${result.seedName ? `seed: ${result.seedName}` : 'seed: <none>'} (strategy ${result.strategy}, ${result.eligible}/${result.total} seeds eligible)`,
    result.summary,
    '',
  ];
  lines.push(
    result.candidates.length > 0
      ? table(
          ['RANK', 'SEED', 'SCORE', 'PROVIDER', 'REGION', 'MULTI-ZONAL', 'SHOOTS'],
          result.candidates.map((c) => [
            String(c.rank),
            c.name,
            String(c.score),
            c.provider,
            c.region,
            String(c.multiZonal),
            `${c.shoots}/${c.capacity ?? '∞'}`,
          ]),
        )
      : 'No eligible seeds.',
  );
  if (result.rejected.length > 0)
    lines.push(
      '',
      table(
        ['REJECTED', 'FILTER', 'REASON'],
        result.rejected.map((r) => [r.seed, r.filter, r.reason]),
      ),
    );
  return lines.join('\n');
}

/** What `POST .../migrate?dryRun=All` answers. */
export interface MigrationPreview {
  migrationId: string;
  resumed: boolean;
  sourceSeed: string;
  destinationSeed: string;
  resumeFrom: string;
  mode: string;
  path: 'good' | 'bad' | 'live';
  pathReason: string;
  steps: { id: string; title: string }[];
  fenceBoundMs: number;
}

/** `shoot migrate --dry-run`: where to, which path and why, the steps, the fence bound. */
export function migrationPreviewText(ref: string, p: MigrationPreview): string {
  return [
    `migration of ${ref} (dry run, nothing started)${p.resumed ? `: resumes ${p.migrationId} at ${p.resumeFrom}` : ''}`,
    `  source:       ${p.sourceSeed}`,
    `  destination:  ${p.destinationSeed}`,
    `  mode:         ${p.mode}`,
    `  path:         ${p.path} (${p.pathReason})`,
    `  fence bound:  ${(p.fenceBoundMs / 1000).toFixed(1)} s (the restore waits for the final snapshot or this long after the owner change)`,
    '',
    table(
      ['STEP', 'TITLE'],
      p.steps.map((s) => [s.id, s.title]),
    ),
  ].join('\n');
}
