import type { Seed } from '../core/model/seed.js';
import type { Shoot } from '../core/model/shoot.js';

/** A plain aligned table, like kubectl's default output. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('   ').trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

function age(iso: string | undefined, now = Date.now()): string {
  if (!iso) return '-';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : `${Math.round(s / 3600)}h`;
}

export function seedRows(seeds: Seed[]): string {
  return table(
    ['NAME', 'PROVIDER', 'REGION', 'SHOOTS', 'READY', 'MULTI-ZONAL', 'HEARTBEAT'],
    seeds.map((s) => [
      s.metadata.name,
      s.spec.provider.type,
      s.spec.provider.region,
      `${s.status.shoots}/${s.spec.capacity?.shoots ?? '∞'}`,
      s.status.conditions.find((c) => c.type === 'GardenletReady')?.status ?? 'Unknown',
      s.status.labels['seed.gardener.cloud/multi-zonal'] ?? 'false',
      age(s.status.lastHeartbeatTime),
    ]),
  );
}

export function shootRows(shoots: Shoot[]): string {
  return table(
    ['PROJECT', 'NAME', 'SEED', 'HA', 'HIBERNATED', 'LAST OPERATION'],
    shoots.map((s) => {
      const op = s.status.lastOperation;
      return [
        s.metadata.project,
        s.metadata.name,
        s.status.seedName ?? '<unscheduled>',
        s.spec.controlPlane?.highAvailability?.failureTolerance.type ?? '-',
        String(s.spec.hibernation?.enabled ?? false),
        op ? `${op.type} ${op.state} ${op.progress}%` : '-',
      ];
    }),
  );
}
