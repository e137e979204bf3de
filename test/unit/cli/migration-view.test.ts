import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GardenClient } from '../../../adapters/http/garden-client.js';
import { MigrationWatchError, pollMigration } from '../../../cli/migrate-command.js';
import {
  apiErrorLine,
  formatDuration,
  formatMigration,
  migrateAccepted,
  migrationTable,
  migrationView,
  type MigrationResponse,
} from '../../../cli/migration-view.js';

const record = (name: string): MigrationResponse =>
  JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', `${name}.json`), 'utf8')) as MigrationResponse;
const now = new Date('2025-01-01T00:00:10.000Z');

describe('migrationView', () => {
  it.each([
    { fixture: 'migration-running', status: 'Running 22%', done: false, exitCode: undefined },
    { fixture: 'migration-succeeded-switched', status: 'Succeeded', done: true, exitCode: 0 },
    {
      fixture: 'migration-error',
      status:
        'Error at restore-etcd: EtcdRestoreFailed: snapshots end at revision 100, expected at least 101 (call migrate again to resume)',
      done: true,
      exitCode: 1,
    },
  ])('$fixture: $status', ({ fixture, status, done, exitCode }) => {
    // Act
    const view = migrationView(record(fixture), { now });

    // Assess
    expect(view.status).toBe(status);
    expect(view.done).toBe(done);
    expect(view.exitCode).toBe(exitCode);
    expect(view.steps.map((s) => s.id)).toEqual(record(fixture).steps.map((s) => s.id));
  });

  it('says why nothing runs while the good path waits out the old TTL, on the next step, until then', () => {
    // Prepare: choose-path done, nothing running yet, the old answers cached until 00:00:40.
    const base = record('migration-running');
    const waiting: MigrationResponse = {
      ...base,
      apiRecordTtl: { from: 60, to: 5, cachedUntil: '2025-01-01T00:00:40.000Z' },
      steps: base.steps.map((s, i) =>
        i < 2 ? s : { ...s, state: 'pending', startedAt: undefined, endedAt: undefined, message: undefined },
      ),
    };
    const detail = (r: MigrationResponse, at: Date) =>
      migrationView(r, { now: at }).steps.find((s) => s.id === 'pre-copy-snapshots')!.detail;

    // Act, Assess
    expect(detail(waiting, now)).toBe(
      "starts at 2025-01-01T00:00:40.000Z, once resolvers' answers of the API record from before the migration (TTL 60 s) have expired",
    );
    expect(detail(waiting, new Date('2025-01-01T00:00:41.000Z'))).toBeUndefined();
    // Once a step runs (the pre-copy started), the steps speak for themselves.
    expect(detail(base, now)).toBe('pre-copied 3 objects, 512 MB, up to revision 12345');
    expect(detail({ ...base, apiRecordTtl: waiting.apiRecordTtl }, now)).toBe(
      'pre-copied 3 objects, 512 MB, up to revision 12345',
    );
  });

  it('shows the running step with its duration so far and the pending ones plainly', () => {
    const text = formatMigration(migrationView(record('migration-running'), { now }));

    expect(text.split('\n').slice(0, 12)).toEqual([
      'Migration mig-0001: dev/api1 aws-eu1 -> aws-eu2, good path',
      'Running 22%',
      '',
      '✔ Admitting the migration and locking the shoot (0ms)',
      '    migrating from aws-eu1 to aws-eu2 (mode auto)',
      '✔ Choosing the good or the bad path (0ms)',
      '    good path: source heartbeat 3s old',
      '✔ Pre-copying the etcd snapshots to the destination bucket before the owner changes (300ms)',
      '    pre-copied 3 objects, 512 MB, up to revision 12345',
      '✔ Restoring etcd ahead in the destination seed (not serving yet) (400ms)',
      '    etcd restored ahead to revision 12345 from 3 snapshots (not serving)',
      '… Migrating the extensions in the source seed (7.0s)',
    ]);
    expect(text).toContain('· Persisting the ShootState');
  });

  it('marks the failed good-path step, the skipped ones with their reason, and the switch in the heading', () => {
    const view = migrationView(record('migration-succeeded-switched'), { now });
    const byId = Object.fromEntries(view.steps.map((s) => [s.id, s]));

    expect(view.heading).toBe(
      'Migration mig-0001: dev/api1 aws-eu1 -> aws-eu2, bad path (switched after delete-owner-record)',
    );
    expect(byId['delete-owner-record']).toMatchObject({
      marker: '✖',
      state: 'failed',
      line: 'Deleting the owner record (the source fences itself) (30.0s)',
      detail: 'States.Timeout; switched to the bad path',
    });
    expect(byId['wait-final-snapshot']).toMatchObject({
      marker: '↓',
      detail: 'switched to the bad path after delete-owner-record failed',
    });
    expect(byId['finalize']).toMatchObject({
      marker: '✔',
      line: 'Setting the shoot onto the destination and releasing the lock (1.5s)',
    });
  });

  it('shows a pre-copy that failed as failed, with why and what does its work instead, in a migration it did not fail', () => {
    const byId = Object.fromEntries(migrationView(record('migration-error'), { now }).steps.map((s) => [s.id, s]));
    const declined = migrationView(record('migration-succeeded-switched'), { now }).steps.find(
      (s) => s.id === 'restore-etcd-ahead',
    );

    expect(byId['pre-copy-snapshots']).toMatchObject({
      marker: '✖',
      state: 'failed',
      detail: expect.stringMatching(
        /^SnapshotStoreUnavailable: .*; continuing without it: copy-snapshots copies everything/,
      ),
    });
    expect(byId['restore-etcd-ahead']).toMatchObject({
      marker: '↓',
      line: 'Restoring etcd ahead in the destination seed (not serving yet)',
      detail: expect.stringMatching(/^pre-copy-snapshots failed/),
    });
    expect(declined).toMatchObject({
      marker: '↓',
      detail: expect.stringMatching(/^the destination does not restore ahead/),
    });
  });

  it('shows how often a resumed step ran', () => {
    const resumed = record('migration-error');
    resumed.steps = resumed.steps.map((s) => (s.id === 'restore-etcd' ? { ...s, attempts: 2 } : s));

    expect(migrationView(resumed, { now }).steps.find((s) => s.id === 'restore-etcd')?.line).toBe(
      'Restoring etcd in the destination seed (attempt 2, 1.0s)',
    );
  });

  it('renders the one-shot table with every step', () => {
    const lines = migrationTable(record('migration-error'), { now }).split('\n');

    expect(lines[3]).toMatch(/^STEP\s+STATE\s+ATTEMPTS\s+STARTED\s+DURATION\s+MESSAGE$/);
    expect(lines.find((l) => l.startsWith('restore-etcd '))).toMatch(
      /^restore-etcd\s+failed\s+1\s+\S+\s+1\.0s\s+EtcdRestoreFailed/,
    );
    expect(lines.find((l) => l.startsWith('finalize'))).toMatch(/^finalize\s+pending\s+0\s+-\s+-$/);
    expect(lines.find((l) => l.startsWith('pre-copy-snapshots'))).toMatch(
      /^pre-copy-snapshots\s+failed\s+1\s+\S+\s+800ms\s+SnapshotStoreUnavailable/,
    );
  });
});

describe('one-line answers', () => {
  it.each([
    [{ migrationId: 'm1', resumed: false, destinationSeed: 'aws-eu2' }, 'migration m1 of dev/api1 to aws-eu2 started'],
    [
      { migrationId: 'm1', resumed: true, destinationSeed: 'aws-eu2' },
      'migration m1 of dev/api1 to aws-eu2 resumed from its last completed step',
    ],
  ])('%j', (body, line) => {
    expect(migrateAccepted(body, 'dev/api1')).toBe(line);
  });

  it.each([
    [
      409,
      { code: 'MigrationRunning', message: 'a migration is running' },
      'error 409 MigrationRunning: a migration is running',
    ],
    [
      422,
      { code: 'SameSeed', message: 'already there', field: 'destinationSeed' },
      'error 422 SameSeed: already there (field destinationSeed)',
    ],
    [502, 'Bad Gateway', 'error 502 : Bad Gateway'],
  ])('%i', (status, body, line) => {
    expect(apiErrorLine(status, body)).toBe(line);
  });

  it.each([
    [850, '850ms'],
    [12_340, '12.3s'],
    [245_000, '4m05s'],
  ])('formatDuration(%i) = %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('pollMigration', () => {
  /** A client answering the given responses in order (the last one repeats). */
  function client(responses: { status: number; body: unknown }[]): GardenClient {
    let i = 0;
    return {
      request: async () => ({ headers: new Headers(), ...responses[Math.min(i++, responses.length - 1)]! }),
    } as unknown as GardenClient;
  }

  it('rides out transient failures, ignores the previous migration, and stops at the end', async () => {
    // Prepare
    const previous = { ...record('migration-error'), id: 'mig-0000' };
    const seen: string[] = [];
    const api = client([
      { status: 404, body: { code: 'NotFound' } },
      { status: 200, body: previous },
      { status: 503, body: 'Service Unavailable' },
      { status: 200, body: record('migration-running') },
      { status: 200, body: record('migration-succeeded-switched') },
    ]);

    // Act
    const final = await pollMigration({
      client: api,
      project: 'dev',
      name: 'api1',
      migrationId: 'mig-0001',
      intervalMs: 1,
      onRecord: (r) => seen.push(r.state),
    });

    // Assess
    expect(final.state).toBe('Succeeded');
    expect(seen).toEqual(['Running', 'Succeeded']);
  });

  it('gives up on a refused read at once, and on transient failures after the limit', async () => {
    await expect(
      pollMigration({
        client: client([{ status: 404, body: { code: 'NotFound', message: 'no migration' } }]),
        project: 'dev',
        name: 'api1',
        intervalMs: 1,
        onRecord: () => {},
      }),
    ).rejects.toThrow('error 404 NotFound: no migration');
    await expect(
      pollMigration({
        client: client([{ status: 500, body: {} }]),
        project: 'dev',
        name: 'api1',
        intervalMs: 1,
        maxConsecutiveErrors: 2,
        onRecord: () => {},
      }),
    ).rejects.toBeInstanceOf(MigrationWatchError);
  });
});
