import { describe, expect, it } from 'vitest';
import type { Evacuation } from '../../../core/evacuation/record.js';
import { evacuationDetail, evacuationTable } from '../../../cli/evacuation-command.js';

const now = new Date('2026-01-01T00:20:30Z');
const e: Evacuation = {
  apiVersion: 'core.gardenless.io/v1',
  kind: 'Evacuation',
  id: 'x',
  seed: 'aws-eu1',
  lastRenewTime: '2026-01-01T00:00:00Z',
  lostSince: '2026-01-01T00:00:30Z',
  phase: 'Paused',
  reason: 'paused by operator at 2026-01-01T00:15:00.000Z',
  maxParallel: 2,
  createdAt: 't',
  updatedAt: 't',
  version: 3,
  shoots: [
    {
      project: 'dev',
      name: 'a',
      state: 'Moved',
      priority: 5,
      destination: 'aws-eu2',
      migrationId: 'm1',
      reason: 'moved to aws-eu2',
    },
    { project: 'dev', name: 'b', state: 'Migrating', priority: 0, destination: 'aws-eu3', migrationId: 'm2' },
    {
      project: 'dev',
      name: 'd',
      state: 'Migrating',
      priority: 0,
      destination: 'aws-eu2',
      migrationId: 'm3',
      slotFreedAt: '2026-01-01T00:19:00Z',
    },
    { project: 'dev', name: 'c', state: 'Pending', priority: 0, reason: 'no seed fits: 0/3 seeds are eligible' },
  ],
};

describe('evacuation tables', () => {
  it('list one line per seed with the shoots by state and how long the seed has been lost', () => {
    const lines = evacuationTable([e], now).split('\n');
    expect(lines[0]).toMatch(
      /^SEED\s+PHASE\s+MOVED\s+MIGRATING\s+PENDING\s+FAILED\s+GONE\s+MAX-PARALLEL\s+LOST\s+HELD$/,
    );
    expect(lines[1]).toMatch(/^aws-eu1\s+Paused\s+1\s+2\s+1\s+0\s+0\s+2\s+20m\s+-$/);
  });

  it('show one evacuation shoot by shoot with destinations, migrations and reasons', () => {
    const text = evacuationDetail({ ...e, held: '3 of 4 seeds have lost their lease' }, now);
    expect(text).toContain('seed aws-eu1: Paused (paused by operator');
    expect(text).toContain('held: 3 of 4 seeds');
    expect(text).toMatch(/dev\/a\s+Moved\s+5\s+aws-eu2\s+m1\s+moved to aws-eu2/);
    expect(text).toMatch(/dev\/c\s+Pending\s+0\s+-\s+-\s+no seed fits/);
    // Past its restore ahead and owner change, a move waits for its copy without holding a place.
    expect(text).toContain('at most 2 holding a place');
    expect(text).toMatch(/dev\/b\s+Migrating\s+0\s+aws-eu3/);
    expect(text).toMatch(/dev\/d\s+Migrating \(place freed\)\s+0\s+aws-eu2\s+m3/);
  });
});
