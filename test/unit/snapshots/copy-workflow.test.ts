import { describe, expect, it } from 'vitest';
import {
  copyBatch,
  CopyVerificationError,
  FailingSnapshotStore,
  findFinalSnapshot,
  InMemorySnapshotStore,
  makeSnapshot,
  NoFullSnapshotError,
  NoSnapshotBeforeTimeoutError,
  planCopyBatches,
  batchItems,
  SnapshotNotFoundError,
  SnapshotStoreError,
  storeCopier,
  summariseCopy,
  validateCopyRequest,
  verifyCopy,
  watchForFinalSnapshot,
  type ObjectCopier,
  type SnapshotFields,
} from '../../../core/snapshots/index.js';
import { fenceBound, FenceBoundError } from '../../../core/ownership/index.js';
import { TECHNICAL_ID } from './helpers.js';

const T = 1_700_000_000_000;
const timings = { dnsCacheTTL: 1_000, ownerCheckInterval: 1_000, unknownGrace: 2_000, fenceTime: 1_000 };
const BOUND = fenceBound(timings);

async function put(
  store: InMemorySnapshotStore,
  fields: Partial<SnapshotFields> & Pick<SnapshotFields, 'kind' | 'lastRevision'>,
  size = 10,
): Promise<string> {
  const s = makeSnapshot({
    technicalID: TECHNICAL_ID,
    startRevision: 0,
    createdOn: T / 1_000,
    compressionSuffix: '',
    final: false,
    ...fields,
  });
  await store.put(s.key, new Uint8Array(size).fill(fields.lastRevision & 0xff));
  return s.key;
}

function config(extra: Record<string, unknown> = {}, now = T) {
  return validateCopyRequest(
    {
      technicalID: TECHNICAL_ID,
      sourceBucket: 'gl-backup-a',
      destinationBucket: 'gl-backup-b',
      fenceTimings: timings,
      waitForFinalTimeoutMs: BOUND,
      ...extra,
    },
    now,
  );
}

describe('validateCopyRequest', () => {
  it('fills in defaults: a wait never shorter than the bound, a deadline from now', () => {
    const c = validateCopyRequest(
      { technicalID: TECHNICAL_ID, sourceBucket: 'gl-backup-a', destinationBucket: 'gl-backup-b' },
      T,
    );
    expect(c).toMatchObject({
      waitForFinalTimeoutMs: 600_000,
      deadline: T + 600_000,
      all: false,
      batchSize: 16,
      ownerChangedAt: null,
      notBefore: null,
    });
  });

  it.each([
    ['a timeout shorter than the bound', { waitForFinalTimeoutMs: BOUND - 1 }, FenceBoundError],
    ['the same bucket twice', { destinationBucket: 'gl-backup-a' }, Error],
    ['a technical ID with a slash at the end', { technicalID: 'shoot--a--b/' }, Error],
  ])('rejects %s', (_, extra, type) => {
    expect(() => config(extra)).toThrow(type);
  });

  it('a pre-copy waits for nothing: its deadline is now, and an owner change time is refused (it runs before one)', () => {
    expect(config({ precopy: true })).toMatchObject({
      precopy: true,
      deadline: T,
      ownerChangedAt: null,
      notBefore: null,
    });
    expect(config()).toMatchObject({ precopy: false, deadline: T + BOUND });
    expect(() => config({ precopy: true, ownerChangedAt: T })).toThrow(/takes no ownerChangedAt/);
  });

  it("takes the migration's decision as its deadline (proceedWithoutFinalAt), never before the fence bound after the owner change", () => {
    const owner = T - 5_000;
    expect(config({ ownerChangedAt: owner, proceedWithoutFinalAt: owner + BOUND + 7_000 })).toMatchObject({
      deadline: owner + BOUND + 7_000,
      waitForFinalTimeoutMs: BOUND + 2_000,
    });
    // Already past: the copy proceeds at its first look.
    expect(config({ ownerChangedAt: T - BOUND - 60_000, proceedWithoutFinalAt: T - 1 })).toMatchObject({
      deadline: T - 1,
      waitForFinalTimeoutMs: 0,
    });
    expect(() => config({ ownerChangedAt: owner, proceedWithoutFinalAt: owner + BOUND - 1 })).toThrow(FenceBoundError);
    expect(() => config({ proceedWithoutFinalAt: T + BOUND })).toThrow(/needs ownerChangedAt/);
    expect(() => config({ precopy: true, proceedWithoutFinalAt: T + BOUND })).toThrow(/needs ownerChangedAt/);
  });

  it('ignores final snapshots older than the owner change minus the clock skew', () => {
    expect(config({ ownerChangedAt: T, clockSkewMs: 10_000 }).notBefore).toBe((T - 10_000) / 1_000);
  });
});

describe('findFinalSnapshot', () => {
  it.each([
    ['no final yet, before the deadline', [], T, { finalFound: false, timedOut: false }],
    ['the final snapshot', [{ kind: 'Full', lastRevision: 50, final: true }], T, { finalFound: true, timedOut: false }],
    [
      'an old final followed by newer deltas',
      [
        { kind: 'Full', lastRevision: 50, final: true },
        { kind: 'Incr', startRevision: 51, lastRevision: 60 },
      ],
      T,
      { finalFound: false },
    ],
    [
      'a final delta',
      [
        { kind: 'Full', lastRevision: 50 },
        { kind: 'Incr', startRevision: 51, lastRevision: 60, final: true },
      ],
      T,
      { finalFound: true, timedOut: false },
    ],
    [
      'no final after the deadline',
      [{ kind: 'Full', lastRevision: 50 }],
      T + BOUND,
      { finalFound: false, timedOut: true },
    ],
  ] as const)('%s', async (_, snapshots, now, expected) => {
    const source = new InMemorySnapshotStore();
    for (const s of snapshots) await put(source, s);
    expect(await findFinalSnapshot({ source, config: config(), now })).toMatchObject(expected);
  });

  it('fails when the deadline passes with nothing in the store', async () => {
    await expect(
      findFinalSnapshot({ source: new InMemorySnapshotStore(), config: config(), now: T + BOUND }),
    ).rejects.toBeInstanceOf(NoSnapshotBeforeTimeoutError);
  });

  it('passes store failures through', async () => {
    await expect(
      findFinalSnapshot({ source: new FailingSnapshotStore({ reason: 'Throttled' }), config: config(), now: T }),
    ).rejects.toBeInstanceOf(SnapshotStoreError);
  });
});

describe('watchForFinalSnapshot', () => {
  /** A clock that only the watch's sleeps move; `arrive` runs at a given time, as a source uploading its final snapshot. */
  function clock(arrive?: { at: number; run: () => Promise<unknown> }) {
    let t = T;
    const sleeps: number[] = [];
    return {
      sleeps,
      now: () => t,
      sleep: async (ms: number) => {
        sleeps.push(ms);
        t += ms;
        if (arrive && t >= arrive.at) {
          const run = arrive.run;
          arrive = undefined;
          await run();
        }
      },
    };
  }

  it('looks every 200 ms and answers at the first look that finds the final snapshot', async () => {
    const source = new InMemorySnapshotStore();
    await put(source, { kind: 'Full', lastRevision: 50 });
    const c = clock({
      at: T + 700,
      run: () => put(source, { kind: 'Incr', startRevision: 51, lastRevision: 60, final: true }),
    });
    const found = await watchForFinalSnapshot({ source, config: config(), now: c.now, sleep: c.sleep });
    expect(found).toMatchObject({ finalFound: true, timedOut: false });
    expect(c.sleeps).toEqual([200, 200, 200, 200]);
  });

  it('gives up after 5 s of looking without it (the state machine waits and calls again), and answers a passed deadline at once', async () => {
    const source = new InMemorySnapshotStore();
    await put(source, { kind: 'Full', lastRevision: 50 });
    const c = clock();
    expect(await watchForFinalSnapshot({ source, config: config(), now: c.now, sleep: c.sleep })).toMatchObject({
      finalFound: false,
      timedOut: false,
    });
    expect(c.sleeps.reduce((a, b) => a + b, 0)).toBe(5_000);
    const late = clock();
    expect(
      await watchForFinalSnapshot({ source, config: config({}, T - BOUND), now: late.now, sleep: late.sleep }),
    ).toMatchObject({ finalFound: false, timedOut: true });
    expect(late.sleeps).toEqual([]);
  });

  it.each([
    ['a pre-copy', { precopy: true }],
    ['a hibernated source', { sourceHibernated: true }],
  ])('looks once for %s', async (_, extra) => {
    const source = new InMemorySnapshotStore();
    await put(source, { kind: 'Full', lastRevision: 50 });
    const c = clock();
    await watchForFinalSnapshot({ source, config: config(extra), now: c.now, sleep: c.sleep });
    expect(c.sleeps).toEqual([]);
  });
});

describe('planCopyBatches, copyBatch, verifyCopy, summariseCopy', () => {
  async function fleet() {
    const source = new InMemorySnapshotStore();
    await put(source, { kind: 'Full', lastRevision: 100 }, 100);
    for (let i = 1; i <= 9; i++)
      await put(source, { kind: 'Incr', startRevision: i * 10 + 91, lastRevision: i * 10 + 100 }, 10 + i);
    return source;
  }

  it('plans the restore in batches and copies them; a second copy skips everything', async () => {
    const source = await fleet();
    const destination = new InMemorySnapshotStore();
    const c = config({ batchSize: 4, ownerChangedAt: T - BOUND });
    const plan = await planCopyBatches({ source, config: c });
    expect(plan).toMatchObject({ objects: 10, deltas: 9, lastRevision: 190, finalFound: false });
    expect(plan.batches.map((b) => b.objects.length)).toEqual([4, 4, 2]);

    const copier = storeCopier(source, destination);
    const first = await Promise.all(
      plan.batches.map((b) => copyBatch({ source, destination, copier, items: batchItems(TECHNICAL_ID, b) })),
    );
    expect(await verifyCopy({ destination, config: c, plan })).toEqual({ verified: 10, lastRevision: 190 });
    const second = await Promise.all(
      plan.batches.map((b) => copyBatch({ source, destination, copier, items: batchItems(TECHNICAL_ID, b) })),
    );

    expect(summariseCopy({ config: c, plan, batches: first, now: T })).toMatchObject({
      copied: 10,
      skipped: 0,
      bytes: 100 + 45 + 90,
      readyToRestore: true,
      readyReason: 'fence-bound-elapsed',
    });
    expect(summariseCopy({ config: c, plan, batches: second, now: T })).toMatchObject({
      copied: 0,
      skipped: 10,
      bytesSkipped: 235,
    });
  });

  it('is not ready before the fence bound has passed since the owner change, and says when it will be', async () => {
    const source = await fleet();
    const c = config({ ownerChangedAt: T });
    const plan = await planCopyBatches({ source, config: c });
    expect(summariseCopy({ config: c, plan, batches: [], now: T + BOUND - 1 })).toMatchObject({
      readyToRestore: false,
      readyAt: T + BOUND,
      readyAtIso: new Date(T + BOUND).toISOString(),
    });
    expect(summariseCopy({ config: c, plan, batches: [], now: T + BOUND })).toMatchObject({
      readyToRestore: true,
      readyAt: null,
    });
  });

  it('recopies a torn object and fails when a copy does not read back as its source', async () => {
    const source = await fleet();
    const destination = new InMemorySnapshotStore();
    const plan = await planCopyBatches({ source, config: config() });
    const items = batchItems(TECHNICAL_ID, plan.batches[0]!);
    await destination.put(items[0]!.key, new Uint8Array([9]));
    expect(await copyBatch({ source, destination, copier: storeCopier(source, destination), items })).toMatchObject({
      copied: items.length,
      skipped: 0,
    });

    const tearing: ObjectCopier = {
      copy: async ({ key }) => void (await destination.put(key, new Uint8Array([1, 2]))),
    };
    await expect(
      copyBatch({ source, destination: new InMemorySnapshotStore(), copier: tearing, items }),
    ).rejects.toBeInstanceOf(CopyVerificationError);
  });

  it('fails on a source object that vanished after the plan', async () => {
    const source = await fleet();
    const plan = await planCopyBatches({ source, config: config() });
    const items = batchItems(TECHNICAL_ID, plan.batches[0]!);
    await source.delete(items[0]!.key);
    await expect(
      copyBatch({ source, destination: new InMemorySnapshotStore(), copier: storeCopier(source, source), items }),
    ).rejects.toBeInstanceOf(SnapshotNotFoundError);
  });

  it.each([
    ['an empty source', [] as const],
    ['a source with only deltas', [{ kind: 'Incr', startRevision: 5, lastRevision: 9 }] as const],
  ])('fails with NoFullSnapshotError on %s', async (_, snapshots) => {
    const source = new InMemorySnapshotStore();
    for (const s of snapshots) await put(source, s);
    await expect(planCopyBatches({ source, config: config() })).rejects.toBeInstanceOf(NoFullSnapshotError);
  });

  it('after a pre-copy, copies only the final delta that ends the history', async () => {
    const source = new InMemorySnapshotStore();
    const destination = new InMemorySnapshotStore();
    const fullKey = await put(source, { kind: 'Full', lastRevision: 100 }, 1_000);
    const deltaKey = await put(source, { kind: 'Incr', startRevision: 101, lastRevision: 120 });
    for (const key of [fullKey, deltaKey]) await destination.put(key, await source.get(key));
    await put(source, { kind: 'Incr', startRevision: 121, lastRevision: 125, final: true });
    const c = config({ ownerChangedAt: T });
    const plan = await planCopyBatches({ source, config: c });
    expect(plan).toMatchObject({ objects: 3, finalFound: true, lastRevision: 125, fullKey, deltas: 2 });
    const batches = await Promise.all(
      plan.batches.map((b) =>
        copyBatch({
          source,
          destination,
          copier: storeCopier(source, destination),
          items: batchItems(TECHNICAL_ID, b),
        }),
      ),
    );
    expect(summariseCopy({ config: c, plan, batches, now: T })).toMatchObject({
      copied: 1,
      skipped: 2,
      bytes: 10,
      bytesSkipped: 1_010,
    });
  });

  it("reports the final snapshot only when it is this migration's", async () => {
    const source = new InMemorySnapshotStore();
    await put(source, { kind: 'Full', lastRevision: 100, final: true, createdOn: T / 1_000 - 3_600 });
    expect((await planCopyBatches({ source, config: config({ ownerChangedAt: T }) })).finalFound).toBe(false);
    expect((await planCopyBatches({ source, config: config({ ownerChangedAt: T - 3_600_000 }) })).finalFound).toBe(
      true,
    );
  });

  it('pre-copies what the restore needs now, never claims a final snapshot, passes no gate, and the copy after the fence sends only what came since', async () => {
    // Prepare: the source still serves; an earlier migration's final snapshot starts its history.
    const source = new InMemorySnapshotStore();
    const destination = new InMemorySnapshotStore();
    await put(source, { kind: 'Full', lastRevision: 100, final: true }, 1_000);
    for (let i = 1; i <= 3; i++)
      await put(source, { kind: 'Incr', startRevision: 91 + i * 10, lastRevision: 100 + i * 10 }, 10);
    const pre = config({ precopy: true, batchSize: 2 });

    // Act: the pre-copy, then the fence's final delta, then the copy after the owner change.
    const prePlan = await planCopyBatches({ source, config: pre });
    const preBatches = await Promise.all(
      prePlan.batches.map((b) =>
        copyBatch({
          source,
          destination,
          copier: storeCopier(source, destination),
          items: batchItems(TECHNICAL_ID, b),
        }),
      ),
    );
    const preSummary = summariseCopy({ config: pre, plan: prePlan, batches: preBatches, now: T });
    await put(source, {
      kind: 'Incr',
      startRevision: 131,
      lastRevision: 133,
      final: true,
      createdOn: (T + 5_000) / 1_000,
    });
    const after = config({ ownerChangedAt: T + 4_000 });
    const plan = await planCopyBatches({ source, config: after });
    const batches = await Promise.all(
      plan.batches.map((b) =>
        copyBatch({
          source,
          destination,
          copier: storeCopier(source, destination),
          items: batchItems(TECHNICAL_ID, b),
        }),
      ),
    );

    // Assess
    expect(prePlan).toMatchObject({ objects: 4, lastRevision: 130, finalFound: false, deltas: 3 });
    expect(preSummary).toMatchObject({
      copied: 4,
      skipped: 0,
      bytes: 1_030,
      lastRevision: 130,
      finalFound: false,
      readyToRestore: false,
      readyReason: 'pre-copy',
      readyAt: null,
      readyAtIso: null,
    });
    expect(await verifyCopy({ destination, config: pre, plan: prePlan })).toEqual({ verified: 4, lastRevision: 130 });
    expect(plan).toMatchObject({ objects: 5, lastRevision: 133, finalFound: true });
    expect(summariseCopy({ config: after, plan, batches, now: T + 5_000 })).toMatchObject({
      copied: 1,
      skipped: 4,
      bytes: 10,
      bytesSkipped: 1_030,
      readyToRestore: true,
      readyReason: 'final-snapshot',
    });
  });

  it('verification fails when a planned object is missing in the destination', async () => {
    const source = await fleet();
    const plan = await planCopyBatches({ source, config: config() });
    await expect(
      verifyCopy({ destination: new InMemorySnapshotStore(), config: config(), plan }),
    ).rejects.toBeInstanceOf(CopyVerificationError);
  });
});
