import { describe, expect, it } from 'vitest';
import {
  planEvacuations,
  seedsToWatch,
  type EvacuationWorld,
  type MigrationFacts,
} from '../../../core/evacuation/plan.js';
import type { Evacuation } from '../../../core/evacuation/record.js';
import type { EvacuationSettings } from '../../../core/evacuation/settings.js';
import { shootKey, tally } from '../../../core/evacuation/record.js';
import type { Seed, Shoot } from '../../../core/model/index.js';
import { at, DUE, MIN, migration, RAILS, seed, shoot } from './builders.js';

const ON = { enabled: true } as const;

function world(
  now: number,
  seeds: Seed[],
  shoots: Shoot[],
  o: Partial<Omit<EvacuationWorld, 'now' | 'seeds' | 'shoots'>> = {},
): EvacuationWorld {
  return {
    now: at(now),
    seeds,
    shoots,
    migrations: o.migrations ?? new Map(),
    evacuations: o.evacuations ?? [],
    rails: o.rails ?? RAILS,
    ...(o.scheduling ? { scheduling: o.scheduling } : {}),
  };
}

/** Seed `lost` (renewed at 0, opted in) with `n` shoots, and healthy seeds b, c. */
function lostSeedWorld(now: number, n: number, o: { evacuation?: EvacuationSettings; capacity?: number } = {}) {
  const seeds = [
    seed('lost', now, { renewedAt: 0, evacuation: o.evacuation ?? ON }),
    seed('b', now, { nodes: 1, ...(o.capacity === undefined ? {} : { capacity: o.capacity }) }),
    seed('c', now, { nodes: 2, ...(o.capacity === undefined ? {} : { capacity: o.capacity }) }),
  ];
  const shoots = Array.from({ length: n }, (_, i) => shoot(`s${i}`, 'lost'));
  return { seeds, shoots };
}

function migrationsOf(plan: ReturnType<typeof planEvacuations>): Map<string, MigrationFacts> {
  return new Map(
    plan.migrations.map((m, i) => [
      `${m.project}/${m.name}`,
      migration(`m${i}`, 'Running', m.seed, m.destination, { createdAt: DUE }),
    ]),
  );
}

describe('planEvacuations: when an evacuation starts', () => {
  it('does nothing for a seed that did not opt in, however long its lease is lost', () => {
    const seeds = [seed('lost', 10 * DUE, { renewedAt: 0 }), seed('b', 10 * DUE)];
    const plan = planEvacuations(world(10 * DUE, seeds, [shoot('s0', 'lost')]));
    expect(plan).toMatchObject({ writes: [], migrations: [], events: [], waiting: [], queued: [] });
    expect(seedsToWatch({ seeds, evacuations: [], now: at(10 * DUE) })).toEqual([]);
  });

  it("waits `after` (default 10 minutes) from the lease's expiry, then starts and moves at most maxParallel (default 5)", () => {
    const before = lostSeedWorld(DUE - 1, 6);
    const waiting = planEvacuations(world(DUE - 1, before.seeds, before.shoots));
    expect(waiting.writes).toEqual([]);
    expect(waiting.waiting).toEqual([{ seed: 'lost', dueAt: at(DUE).toISOString() }]);

    const { seeds, shoots } = lostSeedWorld(DUE, 6);
    const plan = planEvacuations(world(DUE, seeds, shoots));
    expect(plan.writes).toHaveLength(1);
    const { record, expectedVersion } = plan.writes[0]!;
    expect(expectedVersion).toBeUndefined();
    expect(record).toMatchObject({
      seed: 'lost',
      phase: 'Running',
      maxParallel: 5,
      version: 1,
      lostSince: at(30_000).toISOString(),
      lastRenewTime: at(0).toISOString(),
    });
    expect(tally(record)).toMatchObject({ Migrating: 5, Pending: 1 });
    expect(plan.migrations).toHaveLength(5);
    expect(plan.migrations.every((m) => m.action === 'start' && ['b', 'c'].includes(m.destination))).toBe(true);
    expect(plan.events.map((e) => e.type)).toEqual(['EvacuationStarted']);
  });

  it("honours `after` and `maxParallel` from the seed's settings", () => {
    const { seeds, shoots } = lostSeedWorld(30_000 + 90_000, 4, {
      evacuation: { enabled: true, after: '90s', maxParallel: 2 },
    });
    const early = planEvacuations(
      world(
        30_000 + 89_999,
        lostSeedWorld(30_000 + 89_999, 4, { evacuation: { enabled: true, after: '90s', maxParallel: 2 } }).seeds,
        shoots,
      ),
    );
    expect(early.writes).toEqual([]);
    const plan = planEvacuations(world(30_000 + 90_000, seeds, shoots));
    expect(plan.migrations).toHaveLength(2);
  });

  it('starts no evacuation of a seed without shoots, nor a second one for the same loss', () => {
    const { seeds } = lostSeedWorld(DUE, 0);
    expect(planEvacuations(world(DUE, seeds, [])).writes).toEqual([]);
    const { shoots } = lostSeedWorld(DUE, 1);
    const first = planEvacuations(world(DUE, seeds, shoots)).writes[0]!.record;
    const ended: Evacuation = { ...first, phase: 'Cancelled', endedAt: at(DUE).toISOString() };
    expect(planEvacuations(world(DUE + MIN, seeds, shoots, { evacuations: [ended] })).writes).toEqual([]);
  });

  it('starts a new evacuation for a new loss after the last one ended, replacing its item under its version', () => {
    const renewedLater = 5 * DUE;
    const seeds = [
      seed('lost', renewedLater + DUE, { renewedAt: renewedLater, evacuation: ON }),
      seed('b', renewedLater + DUE, { nodes: 1 }),
    ];
    const old: Evacuation = {
      apiVersion: 'core.gardenless.io/v1',
      kind: 'Evacuation',
      id: 'old',
      seed: 'lost',
      lastRenewTime: at(0).toISOString(),
      lostSince: at(30_000).toISOString(),
      phase: 'Stopped',
      maxParallel: 5,
      shoots: [],
      createdAt: at(0).toISOString(),
      updatedAt: at(0).toISOString(),
      version: 7,
    };
    const plan = planEvacuations(world(renewedLater + DUE, seeds, [shoot('s0', 'lost')], { evacuations: [old] }));
    expect(plan.writes[0]).toMatchObject({
      expectedVersion: 7,
      record: { version: 8, lastRenewTime: at(renewedLater).toISOString(), phase: 'Running' },
    });
  });
});

describe('planEvacuations: order and destinations', () => {
  it('moves the highest evacuation priority first, then production, then by name; an invalid priority counts as 0', () => {
    const seeds = [
      seed('lost', DUE, { renewedAt: 0, evacuation: { enabled: true, maxParallel: 3 } }),
      seed('b', DUE, { nodes: 1 }),
    ];
    const shoots = [
      shoot('a-dev', 'lost'),
      shoot('b-prod', 'lost', { purpose: 'production' }),
      shoot('c-high', 'lost', { priority: 10 }),
      shoot('d-low', 'lost', { priority: -1, purpose: 'production' }),
      shoot('e-bad', 'lost', { priority: 'high' }),
      shoot('f-mid', 'lost', { priority: 5 }),
    ];
    const plan = planEvacuations(world(DUE, seeds, shoots));
    expect(plan.migrations.map((m) => m.name)).toEqual(['c-high', 'f-mid', 'b-prod']);
    expect(plan.writes[0]!.record.shoots.map((s) => s.name)).toEqual([
      'c-high',
      'f-mid',
      'b-prod',
      'a-dev',
      'e-bad',
      'd-low',
    ]);
  });

  it('never chooses an unhealthy seed, another lost seed, or one the destination selector does not match', () => {
    const seeds = [
      seed('lost', DUE, {
        renewedAt: 0,
        evacuation: { enabled: true, destinationSelector: { matchLabels: { pool: 'cp' } } },
      }),
      seed('other-lost', DUE, { renewedAt: DUE - 31_000, nodes: 1, labels: { pool: 'cp' } }),
      seed('unlabelled', DUE, { nodes: 2 }),
      seed('good', DUE, { nodes: 3, labels: { pool: 'cp' } }),
    ];
    const plan = planEvacuations(
      world(DUE, seeds, [shoot('s0', 'lost'), shoot('s1', 'lost')], { rails: { ...RAILS, maxLostShare: 1 } }),
    );
    expect(plan.migrations.map((m) => m.destination)).toEqual(['good', 'good']);
  });

  it('counts the moves it chooses and those under way against capacity; a shoot that fits nowhere stays Pending with the reason', () => {
    const { seeds, shoots } = lostSeedWorld(DUE, 4, { capacity: 1 });
    const plan = planEvacuations(world(DUE, seeds, shoots));
    expect(plan.migrations.map((m) => m.destination).sort()).toEqual(['b', 'c']);
    const record = plan.writes[0]!.record;
    const pending = record.shoots.filter((s) => s.state === 'Pending');
    expect(pending).toHaveLength(2);
    expect(pending.every((s) => /no seed fits: .*capacity/.test(s.reason ?? ''))).toBe(true);
    // Next round: the two moves still run, and nothing more fits.
    const next = planEvacuations(
      world(DUE + 5_000, lostSeedWorld(DUE + 5_000, 4, { capacity: 1 }).seeds, shoots, {
        evacuations: [record],
        migrations: migrationsOf(plan),
      }),
    );
    expect(next.migrations).toEqual([]);
    expect(next.writes[0]!.record.shoots.filter((s) => s.state === 'Pending')).toHaveLength(2);
  });

  it('places a pending shoot once capacity appears', () => {
    const { seeds, shoots } = lostSeedWorld(DUE, 3, { capacity: 1 });
    const first = planEvacuations(world(DUE, seeds, shoots));
    const roomy = [seeds[0]!, seed('b', DUE + 5_000, { nodes: 1, capacity: 5 }), seeds[2]!];
    const next = planEvacuations(
      world(DUE + 5_000, roomy, shoots, { evacuations: [first.writes[0]!.record], migrations: migrationsOf(first) }),
    );
    expect(next.migrations).toEqual([expect.objectContaining({ action: 'start', destination: 'b' })]);
  });

  it('shows why a shoot fits nowhere on the shoot itself (status.scheduling), written only when the reason changes, cleared once its move starts', () => {
    const { seeds, shoots } = lostSeedWorld(DUE, 3, { capacity: 1 });
    const first = planEvacuations(world(DUE, seeds, shoots));
    const waiting = first.writes[0]!.record.shoots.find((s) => s.state === 'Pending')!;
    expect(first.shootScheduling).toEqual([
      {
        seed: 'lost',
        project: 'dev',
        name: waiting.name,
        scheduling: expect.objectContaining({ lastAttemptTime: at(DUE).toISOString() }),
      },
    ]);
    const shown = first.shootScheduling[0]!.scheduling!;
    expect(shown.summary).toBe(`evacuation of seed lost: ${waiting.reason}`);
    expect(shown.rejected).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ seed: 'b', filter: 'capacity' }),
        expect.objectContaining({ seed: 'c', filter: 'capacity' }),
        expect.objectContaining({ seed: 'lost', filter: 'excluded' }),
      ]),
    );

    // Next round, the same reason: the shoot as written is not written again.
    const written = shoots.map((s) =>
      s.metadata.name === waiting.name ? { ...s, status: { ...s.status, scheduling: shown } } : s,
    );
    const same = planEvacuations(
      world(DUE + 5_000, lostSeedWorld(DUE + 5_000, 3, { capacity: 1 }).seeds, written, {
        evacuations: [first.writes[0]!.record],
        migrations: migrationsOf(first),
      }),
    );
    expect(same.writes[0]!.record.shoots.find((s) => s.name === waiting.name)).toMatchObject({ state: 'Pending' });
    expect(same.shootScheduling).toEqual([]);

    // Capacity appears: the shoot moves, and the reason goes from it.
    const roomy = [
      seed('lost', DUE + 10_000, { renewedAt: 0, evacuation: ON }),
      seed('b', DUE + 10_000, { nodes: 1, capacity: 5 }),
      seed('c', DUE + 10_000, { nodes: 2, capacity: 1 }),
    ];
    const moved = planEvacuations(
      world(DUE + 10_000, roomy, written, {
        evacuations: [same.writes[0]?.record ?? first.writes[0]!.record],
        migrations: migrationsOf(first),
      }),
    );
    expect(moved.migrations).toEqual([expect.objectContaining({ name: waiting.name, destination: 'b' })]);
    expect(moved.shootScheduling).toEqual([
      { seed: 'lost', project: 'dev', name: waiting.name, scheduling: undefined },
    ]);
  });

  it("a changed reason is written again; a pending placement's reason on a shoot is never the evacuation's to clear", () => {
    const { seeds, shoots } = lostSeedWorld(DUE, 3, { capacity: 1 });
    const first = planEvacuations(world(DUE, seeds, shoots));
    const name = first.shootScheduling[0]!.name;
    const stale = {
      lastAttemptTime: at(0).toISOString(),
      summary: 'evacuation of seed lost: no seed fits: an older reason',
      rejected: [],
    };
    const withStale = shoots.map((s) =>
      s.metadata.name === name ? { ...s, status: { ...s.status, scheduling: stale } } : s,
    );
    const again = planEvacuations(
      world(DUE + 5_000, lostSeedWorld(DUE + 5_000, 3, { capacity: 1 }).seeds, withStale, {
        evacuations: [first.writes[0]!.record],
        migrations: migrationsOf(first),
      }),
    );
    expect(again.shootScheduling).toEqual([
      expect.objectContaining({
        name,
        scheduling: expect.objectContaining({ summary: first.shootScheduling[0]!.scheduling!.summary }),
      }),
    ]);

    // Moving shoots carrying a placement's old reason (not the evacuation's): left as they are.
    const placement = { lastAttemptTime: at(0).toISOString(), summary: '0/3 seeds eligible', rejected: [] };
    const fromPlacement = shoots.map((s) => ({ ...s, status: { ...s.status, scheduling: placement } }));
    const roomy = lostSeedWorld(DUE, 3);
    expect(planEvacuations(world(DUE, roomy.seeds, fromPlacement)).shootScheduling).toEqual([]);
  });
});

describe('planEvacuations: following the moves', () => {
  function started(n = 2, evacuation: { enabled: true; maxParallel?: number } = { enabled: true, maxParallel: 1 }) {
    const { seeds, shoots } = lostSeedWorld(DUE, n, { evacuation });
    const plan = planEvacuations(world(DUE, seeds, shoots));
    return { seeds, shoots, plan, record: plan.writes[0]!.record };
  }

  it("records a claimed move's migration id from the migration record, then Moved when it succeeds, and starts the next", () => {
    const { seeds, shoots, record, plan } = started();
    const m = plan.migrations[0]!;
    const key = `${m.project}/${m.name}`;
    const adopt = planEvacuations(
      world(DUE + 1_000, seeds, shoots, {
        evacuations: [record],
        migrations: new Map([[key, migration('m1', 'Running', 'lost', m.destination, { createdAt: DUE })]]),
      }),
    );
    expect(adopt.migrations).toEqual([]);
    const adopted = adopt.writes[0]!.record;
    expect(adopted.shoots.find((s) => shootKey(s) === key)).toMatchObject({ state: 'Migrating', migrationId: 'm1' });

    const moved = shoots.map((s) =>
      shootKey(s.metadata) === key ? { ...s, status: { ...s.status, seedName: m.destination } } : s,
    );
    const done = planEvacuations(
      world(DUE + 2_000, seeds, moved, {
        evacuations: [adopted],
        migrations: new Map([[key, migration('m1', 'Succeeded', 'lost', m.destination, { createdAt: DUE })]]),
      }),
    );
    expect(done.writes[0]!.record.shoots.find((s) => shootKey(s) === key)).toMatchObject({
      state: 'Moved',
      destination: m.destination,
    });
    expect(done.events.map((e) => e.type)).toEqual(['EvacuationShootEnded']);
    expect(done.migrations).toEqual([expect.objectContaining({ name: 's1', action: 'start' })]);
  });

  it('a move past its restore ahead and owner change frees its place at once: the next starts in the same round, maxParallel counting only the moves that hold one', () => {
    const { seeds, shoots, record, plan } = started(4, { enabled: true, maxParallel: 2 });
    expect(plan.migrations.map((m) => m.name)).toEqual(['s0', 's1']);
    const facts = migrationsOf(plan);
    // Both hold their places: nothing starts.
    const holding = planEvacuations(world(DUE + 1_000, seeds, shoots, { evacuations: [record], migrations: facts }));
    expect(holding.migrations).toEqual([]);
    const adopted = holding.writes[0]!.record;

    // s0's etcd waits restored ahead on its destination and the owner record names it: its place is free.
    const freedAt = at(DUE + 5_000).toISOString();
    const s0 = 'dev/s0';
    facts.set(s0, { ...facts.get(s0)!, slotFreedAt: freedAt });
    const freed = planEvacuations(world(DUE + 6_000, seeds, shoots, { evacuations: [adopted], migrations: facts }));
    expect(freed.migrations).toEqual([expect.objectContaining({ name: 's2', action: 'start' })]);
    const next = freed.writes[0]!.record;
    expect(next.shoots.find((s) => s.name === 's0')).toMatchObject({ state: 'Migrating', slotFreedAt: freedAt });
    expect(next.shoots.filter((s) => s.state === 'Migrating').map((s) => s.name)).toEqual(['s0', 's1', 's2']);

    // Three moves under way, two places held (s1 and s2): nothing more starts until another frees one.
    facts.set(
      'dev/s2',
      migration('m2', 'Running', 'lost', freed.migrations[0]!.destination, { createdAt: DUE + 6_000 }),
    );
    const full = planEvacuations(world(DUE + 7_000, seeds, shoots, { evacuations: [next], migrations: facts }));
    expect(full.migrations).toEqual([]);
    expect(full.writes[0]!.record.shoots.filter((s) => s.state === 'Pending').map((s) => s.name)).toEqual(['s3']);
  });

  it('a move that restores after the wait (no restore ahead) holds its place until it ends, across a resume', () => {
    const { seeds, shoots, record, plan } = started(3, { enabled: true, maxParallel: 1 });
    const facts = migrationsOf(plan);
    const holding = planEvacuations(world(DUE + 1_000, seeds, shoots, { evacuations: [record], migrations: facts }));
    expect(holding.migrations).toEqual([]);
    const adopted = holding.writes[0]!.record;
    const failed = new Map([['dev/s0', { ...facts.get('dev/s0')!, state: 'Error' as const }]]);
    const resume = planEvacuations(world(DUE + 2_000, seeds, shoots, { evacuations: [adopted], migrations: failed }));
    expect(resume.migrations).toEqual([expect.objectContaining({ name: 's0', action: 'resume' })]);
  });

  it("passes the seed's finalSnapshotWait to each move it starts", () => {
    const { plan } = started(2, { enabled: true, maxParallel: 2, finalSnapshotWait: '30m' } as never);
    expect(plan.migrations.map((m) => m.finalSnapshotWait)).toEqual(['30m', '30m']);
  });

  it('starts a claimed move again when no migration of it exists (the round ended before starting it)', () => {
    const { seeds, shoots, record } = started();
    const again = planEvacuations(world(DUE + 1_000, seeds, shoots, { evacuations: [record] }));
    expect(again.migrations).toEqual([expect.objectContaining({ name: 's0', action: 'start' })]);
    expect(again.writes).toEqual([]);
    // An older migration of the shoot (ended before the claim) is not this move.
    const old = planEvacuations(
      world(DUE + 1_000, seeds, shoots, {
        evacuations: [record],
        migrations: new Map([['dev/s0', migration('old', 'Succeeded', 'x', 'lost', { createdAt: 0 })]]),
      }),
    );
    expect(old.migrations).toEqual([expect.objectContaining({ name: 's0', action: 'start' })]);
  });

  it.each([
    { attempts: 1, action: 'resume' as const, state: 'Migrating' },
    { attempts: 2, action: 'resume' as const, state: 'Migrating' },
    { attempts: 3, action: undefined, state: 'Failed' },
  ])(
    'resumes a move that ended in Error until maxAttempts (attempt $attempts: $state)',
    ({ attempts, action, state }) => {
      const { seeds, shoots, record } = started(1);
      const errored = new Map([['dev/s0', migration('m1', 'Error', 'lost', 'b', { attempts, createdAt: DUE })]]);
      const withId: Evacuation = { ...record, shoots: record.shoots.map((s) => ({ ...s, migrationId: 'm1' })) };
      const plan = planEvacuations(world(DUE + 1_000, seeds, shoots, { evacuations: [withId], migrations: errored }));
      expect(plan.migrations.map((m) => m.action)).toEqual(action ? [action] : []);
      const after = plan.writes[0]?.record ?? withId;
      expect(after.shoots[0]!.state).toBe(state);
      if (state === 'Failed') expect(after.phase).toBe('Completed');
    },
  );

  it('adopts a migration an operator started from the seed instead of starting a second one for the shoot', () => {
    const { seeds, shoots } = lostSeedWorld(DUE, 2, { evacuation: { enabled: true, maxParallel: 1 } });
    const operator = new Map([['dev/s0', migration('op', 'Running', 'lost', 'c', { createdAt: DUE - 5_000 })]]);
    const plan = planEvacuations(world(DUE, seeds, shoots, { migrations: operator }));
    expect(plan.migrations).toEqual([]);
    expect(plan.writes[0]!.record.shoots[0]).toMatchObject({
      name: 's0',
      state: 'Migrating',
      migrationId: 'op',
      destination: 'c',
    });
  });

  it('counts a shoot deleted or moved by someone else as Gone and completes when every shoot is settled', () => {
    const { seeds, shoots, record } = started(2, { enabled: true, maxParallel: 5 });
    const plan = planEvacuations(world(DUE + 1_000, seeds, [], { evacuations: [record] }));
    const after = plan.writes[0]!.record;
    expect(after.shoots.map((s) => s.state)).toEqual(['Gone', 'Gone']);
    expect(after.phase).toBe('Completed');
    expect(plan.events.map((e) => e.type)).toEqual(['EvacuationShootEnded', 'EvacuationShootEnded', 'EvacuationEnded']);
    expect(shoots).toHaveLength(2);
  });

  it('a repeated round over the same facts writes and starts nothing (idempotent)', () => {
    const { seeds, shoots, record, plan } = started(3, { enabled: true, maxParallel: 2 });
    const migrations = migrationsOf(plan);
    const r1 = planEvacuations(world(DUE + 1_000, seeds, shoots, { evacuations: [record], migrations }));
    const r2 = planEvacuations(world(DUE + 2_000, seeds, shoots, { evacuations: [r1.writes[0]!.record], migrations }));
    expect(r2.writes).toEqual([]);
    expect(r2.migrations).toEqual([]);
    expect(r2.events).toEqual([]);
  });
});

describe('planEvacuations: rails and phases', () => {
  it('evacuates two lost seeds one after the other under the global cap of 1, oldest loss first', () => {
    const now = DUE + MIN;
    const seeds = [
      seed('x', now, { renewedAt: MIN, evacuation: ON }),
      seed('y', now, { renewedAt: 0, evacuation: ON, nodes: 1 }),
      seed('b', now, { nodes: 2 }),
      seed('c', now, { nodes: 3 }),
      seed('d', now, { nodes: 4 }),
    ];
    const shoots = [shoot('x0', 'x'), shoot('y0', 'y')];
    const first = planEvacuations(world(now, seeds, shoots));
    expect(first.writes.map((w) => w.record.seed)).toEqual(['y']);
    expect(first.queued).toEqual(['x']);
    const done: Evacuation = { ...first.writes[0]!.record, phase: 'Completed' };
    const second = planEvacuations(world(now + 1_000, seeds, shoots, { evacuations: [done] }));
    expect(second.writes.map((w) => w.record.seed)).toEqual(['x']);
  });

  it('starts no evacuation when more than the allowed share of seeds lost their lease together, and holds running ones', () => {
    const seeds = [
      seed('x', DUE, { renewedAt: 0, evacuation: ON }),
      seed('y', DUE, { renewedAt: 0, evacuation: ON, nodes: 1 }),
      seed('b', DUE, { nodes: 2 }),
    ];
    const shoots = [shoot('x0', 'x'), shoot('y0', 'y')];
    const plan = planEvacuations(world(DUE, seeds, shoots));
    expect(plan.writes).toEqual([]);
    expect(plan.held).toMatch(/2 of 3 seeds have lost their lease/);
    expect(plan.queued).toEqual(['x', 'y']);

    const allLost = [seed('x', DUE, { renewedAt: 0, evacuation: ON }), seed('b', DUE, { renewedAt: 0, nodes: 2 })];
    expect(planEvacuations(world(DUE, allLost, [shoot('x0', 'x')])).writes).toEqual([]);

    const running = planEvacuations(
      world(DUE, [seeds[0]!, seeds[2]!, seed('c', DUE, { nodes: 3 })], [shoot('x0', 'x'), shoot('x1', 'x')], {
        rails: { ...RAILS },
      }),
    ).writes[0]!.record;
    const unstarted: Evacuation = {
      ...running,
      shoots: running.shoots.map((s) => ({ project: s.project, name: s.name, state: 'Pending', priority: 0 })),
    };
    const heldPlan = planEvacuations(
      world(DUE + 1_000, seeds, shoots.concat(shoot('x1', 'x')), { evacuations: [unstarted] }),
    );
    expect(heldPlan.migrations).toEqual([]);
    expect(heldPlan.writes[0]!.record.held).toMatch(/no shoot moves/);
    expect(heldPlan.events.map((e) => e.type)).toEqual(['EvacuationHeld']);
  });

  it('a paused evacuation starts no move but follows those under way; Running again moves the rest', () => {
    const { seeds, shoots } = lostSeedWorld(DUE, 3, { evacuation: { enabled: true, maxParallel: 1 } });
    const plan = planEvacuations(world(DUE, seeds, shoots));
    const paused: Evacuation = { ...plan.writes[0]!.record, phase: 'Paused' };
    const migrations = new Map([['dev/s0', migration('m1', 'Succeeded', 'lost', 'b', { createdAt: DUE })]]);
    const p = planEvacuations(world(DUE + 1_000, seeds, shoots, { evacuations: [paused], migrations }));
    expect(p.migrations).toEqual([]);
    expect(p.writes[0]!.record.shoots[0]!.state).toBe('Moved');
    const resumed: Evacuation = { ...p.writes[0]!.record, phase: 'Running' };
    expect(
      planEvacuations(world(DUE + 2_000, seeds, shoots, { evacuations: [resumed], migrations })).migrations,
    ).toEqual([expect.objectContaining({ name: 's1' })]);
  });

  it('a cancelled evacuation lets moves under way finish, then ends Cancelled with the rest staying', () => {
    const { seeds, shoots } = lostSeedWorld(DUE, 3, { evacuation: { enabled: true, maxParallel: 1 } });
    const record: Evacuation = { ...planEvacuations(world(DUE, seeds, shoots)).writes[0]!.record, phase: 'Cancelling' };
    const running = new Map([['dev/s0', migration('m1', 'Running', 'lost', 'b', { createdAt: DUE })]]);
    const still = planEvacuations(world(DUE + 1_000, seeds, shoots, { evacuations: [record], migrations: running }));
    expect(still.migrations).toEqual([]);
    expect(still.writes[0]!.record.phase).toBe('Cancelling');
    const succeeded = new Map([['dev/s0', migration('m1', 'Succeeded', 'lost', 'b', { createdAt: DUE })]]);
    const end = planEvacuations(
      world(DUE + 2_000, seeds, shoots, { evacuations: [still.writes[0]!.record], migrations: succeeded }),
    );
    expect(end.writes[0]!.record).toMatchObject({ phase: 'Cancelled' });
    expect(end.events.at(-1)).toMatchObject({
      type: 'EvacuationEnded',
      detail: { phase: 'Cancelled', moved: 1, stayed: 2 },
    });
  });

  it('a claimed move not started yet goes back to Pending when the evacuation no longer runs', () => {
    const { seeds, shoots } = lostSeedWorld(DUE, 1);
    const record: Evacuation = { ...planEvacuations(world(DUE, seeds, shoots)).writes[0]!.record, phase: 'Cancelling' };
    const plan = planEvacuations(world(DUE + 1_000, seeds, shoots, { evacuations: [record] }));
    expect(plan.migrations).toEqual([]);
    expect(plan.writes[0]!.record).toMatchObject({ phase: 'Cancelled', shoots: [{ state: 'Pending' }] });
  });

  it('stops when the seed renews its lease: no new moves, the shoots not moved stay', () => {
    const { seeds, shoots } = lostSeedWorld(DUE, 3, { evacuation: { enabled: true, maxParallel: 1 } });
    const record = planEvacuations(world(DUE, seeds, shoots)).writes[0]!.record;
    const back = [seed('lost', DUE + 5_000, { evacuation: ON }), ...seeds.slice(1)];
    const running = new Map([['dev/s0', migration('m1', 'Running', 'lost', 'b', { createdAt: DUE })]]);
    const plan = planEvacuations(world(DUE + 5_000, back, shoots, { evacuations: [record], migrations: running }));
    expect(plan.migrations).toEqual([]);
    expect(plan.writes[0]!.record).toMatchObject({
      phase: 'Stopping',
      reason: expect.stringMatching(/renewed its lease/),
    });
  });

  it("a seed back mid-evacuation: the move under way finishes, the shoots not moved stay on it without the evacuation's reason, then Stopped", () => {
    // s0 moved, s1 moving, s2 fits nowhere (b and c hold one shoot each); then the seed renews its lease.
    const full = (now: number) => [
      seed('lost', now, { renewedAt: 0, evacuation: ON }),
      seed('b', now, { nodes: 1, capacity: 1 }),
      seed('c', now, { nodes: 2, capacity: 1 }),
    ];
    const { shoots } = lostSeedWorld(DUE, 3);
    const first = planEvacuations(world(DUE, full(DUE), shoots));
    const record = first.writes[0]!.record;
    expect(tally(record)).toMatchObject({ Migrating: 2, Pending: 1 });
    const [a, b] = first.migrations;
    const stays = record.shoots.find((s) => s.state === 'Pending')!.name;
    const reason = first.shootScheduling[0]!.scheduling!;
    const current = shoots.map((s) => {
      if (s.metadata.name === a!.name)
        return {
          ...s,
          spec: { ...s.spec, seedName: a!.destination },
          status: { ...s.status, seedName: a!.destination },
        };
      if (s.metadata.name === stays) return { ...s, status: { ...s.status, scheduling: reason } };
      return s;
    });
    const back = (now: number) => [seed('lost', now, { evacuation: ON }), ...full(now).slice(1)];
    const facts = (bState: MigrationFacts['state']) =>
      new Map([
        [`dev/${a!.name}`, migration('m0', 'Succeeded', 'lost', a!.destination, { createdAt: DUE })],
        [`dev/${b!.name}`, migration('m1', bState, 'lost', b!.destination, { createdAt: DUE })],
      ]);
    const stopping = planEvacuations(
      world(DUE + 5_000, back(DUE + 5_000), current, { evacuations: [record], migrations: facts('Running') }),
    );
    const mid = stopping.writes[0]!.record;
    expect(mid.phase).toBe('Stopping');
    expect(mid.shoots.map((s) => [s.name, s.state])).toEqual(
      expect.arrayContaining([
        [a!.name, 'Moved'],
        [b!.name, 'Migrating'],
        [stays, 'Pending'],
      ]),
    );
    expect(stopping.migrations).toEqual([]);
    // Still in an active evacuation while Stopping, but no longer waiting for a seed: its reason goes.
    expect(stopping.shootScheduling).toEqual([{ seed: 'lost', project: 'dev', name: stays, scheduling: undefined }]);

    const cleared = current.map((s) =>
      s.metadata.name === stays ? { ...s, status: { ...s.status, scheduling: undefined } } : s,
    );
    const moving = cleared.map((s) =>
      s.metadata.name === b!.name
        ? { ...s, spec: { ...s.spec, seedName: b!.destination }, status: { ...s.status, seedName: b!.destination } }
        : s,
    );
    const ended = planEvacuations(
      world(DUE + 60_000, back(DUE + 60_000), moving, { evacuations: [mid], migrations: facts('Succeeded') }),
    ).writes[0]!.record;
    expect(ended).toMatchObject({ phase: 'Stopped', endedAt: at(DUE + 60_000).toISOString() });
    expect(tally(ended)).toMatchObject({ Moved: 2, Pending: 1 });
  });

  it('cancels when the seed no longer opts in', () => {
    const { seeds, shoots } = lostSeedWorld(DUE, 2);
    const record = planEvacuations(world(DUE, seeds, shoots)).writes[0]!.record;
    const off = [seed('lost', DUE + 1_000, { renewedAt: 0, evacuation: { enabled: false } }), ...seeds.slice(1)];
    const plan = planEvacuations(world(DUE + 1_000, off, shoots, { evacuations: [record] }));
    expect(plan.writes[0]!.record).toMatchObject({ phase: 'Cancelled', reason: expect.stringMatching(/disabled/) });
  });

  it('watches the seeds with an active evacuation and the lost seeds that opted in', () => {
    const { seeds, shoots } = lostSeedWorld(DUE, 1);
    const record = planEvacuations(world(DUE, seeds, shoots)).writes[0]!.record;
    expect(seedsToWatch({ seeds, evacuations: [], now: at(DUE) })).toEqual(['lost']);
    expect(seedsToWatch({ seeds: seeds.slice(1), evacuations: [record], now: at(DUE) })).toEqual(['lost']);
    expect(
      seedsToWatch({ seeds: seeds.slice(1), evacuations: [{ ...record, phase: 'Completed' }], now: at(DUE) }),
    ).toEqual([]);
  });
});
