import { describe, expect, it } from 'vitest';
import { buildEvent } from '../../../core/events/schemas.js';
import { AdmissionMover } from '../../../core/evacuation/admission-mover.js';
import { applyControl, EvacuationControls } from '../../../core/evacuation/controls.js';
import { tally, type Evacuation } from '../../../core/evacuation/record.js';
import { runEvacuationRound, runEvacuationRounds } from '../../../core/evacuation/round.js';
import { DEFAULT_RAILS } from '../../../core/evacuation/settings.js';
import { MemoryEvacuationStore, type EvacuationStore } from '../../../core/evacuation/store.js';
import { MemoryGardenRepository } from '../../../core/garden/memory-repository.js';
import { GardenService } from '../../../core/garden/service.js';
import { holdsLock } from '../../../core/migration/lock.js';
import { MigrationJournal } from '../../../core/migration/journal.js';
import { MigrationAdmission, type MigrationExecutionInput } from '../../../core/migration/migration-admission.js';
import { MemoryMigrationStore } from '../../../core/migration/store.js';
import { createAnswered, ManualClock, seedBody, shootBody } from '../garden/builders.js';

const READY = {
  conditions: [
    { type: 'GardenletReady', status: 'True' },
    { type: 'BackupBucketsReady', status: 'True' },
  ],
  leaseDurationSeconds: 6,
};

/** A garden in memory with the real migration admission: seed `lost` (opted in: after 1m, maxParallel 2) hosting 3 shoots, seeds b and c (`capacity` shoots each, default unbounded). */
async function garden(options: { store?: EvacuationStore; capacity?: number } = {}) {
  const clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
  const repo = new MemoryGardenRepository({ clock });
  const service = new GardenService({
    repository: repo,
    clock,
    provisioner: {
      provision: async (n) => ({ commandQueueUrl: `https://sqs.local/000000000000/gl-seed-${n}.fifo` }),
      deprovision: async () => {},
    },
  });
  const evacuation = { enabled: true, after: '1m', maxParallel: 2, finalSnapshotWait: '15m' };
  for (const [i, name] of ['lost', 'b', 'c'].entries()) {
    await service.putSeed(
      name,
      seedBody({
        spec: {
          taints: undefined,
          capacity: name !== 'lost' && options.capacity !== undefined ? { shoots: options.capacity } : undefined,
          backup: { bucket: `gl-backup-${name}`, region: 'eu-west-1' },
          networks: { nodes: `10.${i}.0.0/16`, pods: '10.200.0.0/16', services: '10.201.0.0/16' },
          settings: name === 'lost' ? { evacuation } : {},
        },
      }),
    );
    await service.heartbeat(name, READY);
  }
  for (const n of ['s0', 's1', 's2']) {
    await service.putShoot(
      'dev',
      n,
      shootBody({
        spec: { seedName: 'lost', controlPlane: undefined, purpose: n === 's2' ? 'production' : 'development' },
      }),
    );
    await createAnswered(repo, 'dev', n, clock.now());
  }
  const events: { type: string; detail: Record<string, unknown> }[] = [];
  // Every event must fit its schema on the bus, as the EventBridge sink builds it.
  const sink = {
    publish: async (type: string, detail: Record<string, unknown>) =>
      void events.push({ type, detail: buildEvent(type, detail) }),
  };
  const migrations = new MemoryMigrationStore();
  const journal = new MigrationJournal({ garden: repo, migrations, clock, events: sink });
  const started: MigrationExecutionInput[] = [];
  const admission = new MigrationAdmission({
    journal,
    workflow: { start: async ({ input }) => void started.push(input), ended: async () => false },
  });
  const store = options.store ?? new MemoryEvacuationStore();
  const round = () =>
    runEvacuationRound({
      repo,
      migrations,
      store,
      mover: new AdmissionMover(admission),
      events: sink,
      rails: DEFAULT_RAILS,
      now: clock.now(),
    });
  /** Seeds b and c heartbeat; `lost` stays silent. */
  const pass = async (ms: number) => {
    clock.advance(ms);
    for (const name of ['b', 'c']) await service.heartbeat(name, READY);
  };
  /** The shoot's migration succeeds: it runs on its destination. */
  const succeed = async (name: string) => {
    const record = (await migrations.get('dev', name))!;
    const shoot = (await repo.getShoot('dev', name))!;
    await repo.moveShoot(
      {
        ...shoot,
        spec: { ...shoot.spec, seedName: record.destination.name },
        status: { ...shoot.status, seedName: record.destination.name },
      },
      { fromSeed: 'lost', toSeed: record.destination.name, expectedVersion: shoot.metadata.resourceVersion! },
    );
    await migrations.put(
      { ...record, state: 'Succeeded', finishedAt: clock.now().toISOString() },
      holdsLock(record.id),
    );
  };
  return {
    clock,
    repo,
    service,
    events,
    migrations,
    started,
    store,
    round,
    pass,
    succeed,
    controls: new EvacuationControls({ store, events: sink, clock }),
    mover: new AdmissionMover(admission),
  };
}

/** A store where, once, another writer puts `theirs(record)` first when `when(expected)` holds: the write that follows loses. */
function racingStore(
  when: (expected: number | undefined) => boolean,
  theirs: (record: Evacuation) => Evacuation,
): EvacuationStore {
  const inner = new MemoryEvacuationStore();
  let interfere = true;
  return {
    list: () => inner.list(),
    get: (s) => inner.get(s),
    put: async (record, expected) => {
      if (interfere && when(expected)) {
        interfere = false;
        await inner.put(theirs(record), expected);
      }
      return inner.put(record, expected);
    },
  };
}

describe('runEvacuationRound with the real migration admission', () => {
  it('evacuates a lost seed that opted in: two bad-path moves at a time, production first, ids recorded, then the rest, then Completed', async () => {
    const g = await garden();
    await g.pass(6_000 + 59_000);
    expect((await g.round()).plan.waiting).toEqual([{ seed: 'lost', dueAt: '2026-01-01T00:01:06.000Z' }]);
    await g.pass(1_000);
    const first = await g.round();
    expect(first.started.map((s) => s.shoot)).toEqual(['dev/s2', 'dev/s0']);
    expect(g.started.map((s) => s.ref.name)).toEqual(['s2', 's0']);
    expect(await g.migrations.get('dev', 's2')).toMatchObject({
      mode: 'bad',
      state: 'Running',
      source: { name: 'lost' },
      finalSnapshotWait: '15m',
    });
    const stored = (await g.store.get('lost'))!;
    expect(stored.shoots.filter((s) => s.state === 'Migrating').every((s) => s.migrationId !== undefined)).toBe(true);
    expect(g.events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['EvacuationStarted', 'MigrationStarted', 'EvacuationShootStarted']),
    );

    // Nothing more starts while two run; a repeated round writes nothing.
    await g.pass(5_000);
    const again = await g.round();
    expect(again.plan.writes).toEqual([]);
    expect(again.started).toEqual([]);

    await g.succeed('s2');
    await g.pass(5_000);
    expect((await g.round()).started.map((s) => s.shoot)).toEqual(['dev/s1']);
    await g.succeed('s0');
    await g.succeed('s1');
    await g.pass(5_000);
    await g.round();
    const done = (await g.store.get('lost'))!;
    expect(done.phase).toBe('Completed');
    expect(tally(done)).toMatchObject({ Moved: 3 });
    expect(g.events.filter((e) => e.type === 'EvacuationEnded')).toEqual([
      expect.objectContaining({ detail: expect.objectContaining({ phase: 'Completed', moved: 3 }) }),
    ]);
  });

  it('a move restored ahead whose owner record moved frees its place at once: the next starts while it still waits for its copy', async () => {
    const g = await garden();
    await g.pass(6_000 + 60_000);
    expect((await g.round()).started.map((s) => s.shoot)).toEqual(['dev/s2', 'dev/s0']);
    const record = (await g.migrations.get('dev', 's2'))!;
    const at = g.clock.now().toISOString();
    await g.migrations.put(
      {
        ...record,
        steps: record.steps.map((s) =>
          s.id === 'restore-etcd-ahead' || s.id === 'set-owner-destination'
            ? { ...s, state: 'succeeded' as const, startedAt: at, endedAt: at }
            : s,
        ),
      },
      holdsLock(record.id),
    );
    await g.pass(1_000);
    const next = await g.round();
    expect(next.started.map((s) => s.shoot)).toEqual(['dev/s1']);
    const stored = (await g.store.get('lost'))!;
    expect(stored.shoots.find((s) => s.name === 's2')).toMatchObject({ state: 'Migrating', slotFreedAt: at });
    expect(stored.shoots.filter((s) => s.state === 'Migrating')).toHaveLength(3);
  });

  it("asks the due timer to wake it when a waiting seed's evacuation is due; a timer that fails leaves it to the next round", async () => {
    const g = await garden();
    await g.pass(6_000 + 30_000);
    const asked: string[] = [];
    const base = {
      repo: g.repo,
      migrations: g.migrations,
      store: g.store,
      mover: g.mover,
      events: { publish: async () => {} },
      rails: DEFAULT_RAILS,
      now: g.clock.now(),
    };
    const woken = await runEvacuationRound({
      ...base,
      dueTimer: { wakeAt: async (seed, dueAt) => void asked.push(`${seed} ${dueAt}`) },
    });
    expect(asked).toEqual(['lost 2026-01-01T00:01:06.000Z']);
    expect(woken.timerErrors).toEqual([]);
    const failing = await runEvacuationRound({
      ...base,
      dueTimer: {
        wakeAt: async () => {
          throw new Error('states unavailable');
        },
      },
    });
    expect(failing.timerErrors).toEqual([{ seed: 'lost', error: 'states unavailable' }]);
    expect(failing.plan.waiting).toHaveLength(1);
  });

  it('a round that loses the race for the record starts nothing', async () => {
    const racing = racingStore(
      () => true,
      (record) => ({ ...record, version: 1, phase: 'Paused' }),
    );
    const g = await garden({ store: racing });
    await g.pass(6_000 + 60_000);
    const result = await g.round();
    expect(result.lostRaces).toEqual(['lost']);
    expect(g.started).toEqual([]);
    expect(g.events.filter((e) => e.type.startsWith('Evacuation'))).toEqual([]);
  });

  it('the controller runs a round that lost a race again at once, so that the change its event announced is not left to the next minute', async () => {
    // Another round created the evacuation first, without moves.
    const racing = racingStore(
      (expected) => expected === undefined,
      (record) => ({ ...record, shoots: record.shoots.map((s) => ({ ...s, state: 'Pending' as const })), version: 1 }),
    );
    const g = await garden({ store: racing });
    await g.pass(6_000 + 60_000);
    const result = await runEvacuationRounds({
      repo: g.repo,
      migrations: g.migrations,
      store: racing,
      mover: g.mover,
      events: { publish: async () => {} },
      rails: DEFAULT_RAILS,
      now: () => g.clock.now(),
    });
    expect(result.lostRaces).toEqual([]);
    expect(result.started.map((s) => s.shoot)).toEqual(['dev/s2', 'dev/s0']);
  });

  it('pause stops new moves and lets running ones finish; resume goes on; cancel ends it once nothing runs', async () => {
    const g = await garden();
    await g.pass(6_000 + 60_000);
    await g.round();
    expect((await g.controls.control('lost', 'pause', { by: 'alice' })).phase).toBe('Paused');
    await g.succeed('s2');
    await g.pass(5_000);
    expect((await g.round()).started).toEqual([]);
    expect(tally((await g.store.get('lost'))!)).toMatchObject({ Moved: 1, Migrating: 1, Pending: 1 });
    await g.controls.control('lost', 'resume');
    await g.pass(5_000);
    expect((await g.round()).started.map((s) => s.shoot)).toEqual(['dev/s1']);
    expect((await g.controls.control('lost', 'cancel')).phase).toBe('Cancelling');
    await g.succeed('s0');
    await g.pass(5_000);
    await g.round();
    expect((await g.store.get('lost'))!.phase).toBe('Cancelling');
    await g.succeed('s1');
    await g.pass(5_000);
    await g.round();
    expect((await g.store.get('lost'))!).toMatchObject({ phase: 'Cancelled' });
    expect(g.events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['EvacuationPaused', 'EvacuationResumed', 'EvacuationCancelled', 'EvacuationEnded']),
    );
    await expect(g.controls.control('lost', 'resume')).rejects.toMatchObject({ code: 'EvacuationNotControllable' });
    await expect(g.controls.get('nope')).rejects.toMatchObject({ code: 'NotFound' });
  });
});

describe('runEvacuationRound: a shoot that fits nowhere', () => {
  it('shows the reason on the shoot itself (GET shoot: status.scheduling) until capacity appears and its move starts', async () => {
    const g = await garden({ capacity: 1 });
    await g.pass(6_000 + 60_000);
    const first = await g.round();
    expect(first.started.map((s) => s.shoot)).toEqual(['dev/s2', 'dev/s0']);
    // s2 arrives on its seed: a place is free, but b and c are full (s2 on one, s0 on its way to the other).
    await g.succeed('s2');
    await g.pass(5_000);
    expect((await g.round()).started).toEqual([]);
    const waiting = await g.service.getShoot('dev', 's1');
    expect(waiting.status.seedName).toBe('lost');
    expect(waiting.status.scheduling).toMatchObject({
      summary: expect.stringMatching(/^evacuation of seed lost: no seed fits: /),
      lastAttemptTime: g.clock.now().toISOString(),
    });
    expect(waiting.status.scheduling!.rejected).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ seed: 'b', filter: 'capacity' }),
        expect.objectContaining({ seed: 'c', filter: 'capacity' }),
      ]),
    );
    expect((await g.store.get('lost'))!.shoots.find((s) => s.name === 's1')!.reason).toBe(
      waiting.status.scheduling!.summary.replace('evacuation of seed lost: ', ''),
    );

    // Rounds with the same reason leave the shoot's resourceVersion alone.
    await g.pass(5_000);
    await g.round();
    expect((await g.service.getShoot('dev', 's1')).metadata.resourceVersion).toBe(waiting.metadata.resourceVersion);

    // Capacity appears on b: s1 moves, and the reason is gone from it.
    await g.service.putSeed(
      'b',
      seedBody({
        spec: {
          taints: undefined,
          capacity: { shoots: 5 },
          backup: { bucket: 'gl-backup-b', region: 'eu-west-1' },
          networks: { nodes: '10.1.0.0/16', pods: '10.200.0.0/16', services: '10.201.0.0/16' },
          settings: {},
        },
      }),
    );
    await g.pass(5_000);
    expect((await g.round()).started).toEqual([expect.objectContaining({ shoot: 'dev/s1', destination: 'b' })]);
    expect((await g.service.getShoot('dev', 's1')).status.scheduling).toBeUndefined();
  });
});

describe('applyControl', () => {
  const base: Evacuation = {
    apiVersion: 'core.gardenless.io/v1',
    kind: 'Evacuation',
    id: 'e',
    seed: 'lost',
    lastRenewTime: 't',
    lostSince: 't',
    phase: 'Running',
    maxParallel: 1,
    shoots: [
      { project: 'dev', name: 'a', state: 'Migrating', priority: 0, migrationId: 'm' },
      { project: 'dev', name: 'b', state: 'Pending', priority: 0 },
    ],
    createdAt: 't',
    updatedAt: 't',
    version: 3,
  };
  const now = new Date('2026-01-01T00:00:00Z');

  it.each([
    { phase: 'Running', control: 'pause', to: 'Paused' },
    { phase: 'Paused', control: 'resume', to: 'Running' },
    { phase: 'Running', control: 'cancel', to: 'Cancelling' },
    { phase: 'Paused', control: 'cancel', to: 'Cancelling' },
    { phase: 'Paused', control: 'pause', to: undefined },
    { phase: 'Running', control: 'resume', to: undefined },
    { phase: 'Cancelled', control: 'cancel', to: undefined },
  ] as const)('$control on $phase -> $to', ({ phase, control, to }) => {
    const next = applyControl({ ...base, phase }, control, { now });
    expect(next?.phase).toBe(to);
    if (next) expect(next.version).toBe(4);
  });

  it.each([
    ['Cancelling', 'pause'],
    ['Stopping', 'resume'],
    ['Completed', 'cancel'],
    ['Cancelled', 'pause'],
    ['Stopped', 'resume'],
  ] as const)('%s refuses %s with 409', (phase, control) => {
    expect(() => applyControl({ ...base, phase }, control, { now })).toThrow(
      expect.objectContaining({ code: 'EvacuationNotControllable' }),
    );
  });

  it('cancel ends at once when no move is under way', () => {
    const idle = { ...base, shoots: base.shoots.map((s) => ({ ...s, state: 'Pending' as const })) };
    expect(applyControl(idle, 'cancel', { now })).toMatchObject({ phase: 'Cancelled', endedAt: now.toISOString() });
  });
});
