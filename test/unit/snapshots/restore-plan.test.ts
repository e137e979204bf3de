import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  NoFullSnapshotError,
  planRestore,
  RestorePlanGapError,
  RestorePlanIncompleteError,
  restorePlanSnapshots,
  type Snapshot,
} from '../../../core/snapshots/index.js';
import { full, incr } from './helpers.js';

const names = (list: readonly Snapshot[]) =>
  list.map((s) => `${s.kind}:${s.startRevision}-${s.lastRevision}${s.final ? ':final' : ''}`);

describe('planRestore', () => {
  it.each<[string, Snapshot[], string[], number]>([
    ['a full snapshot alone', [full(100)], ['Full:0-100'], 100],
    [
      'full plus a chain of deltas, listed out of order',
      [incr(121, 140), full(100), incr(101, 120)],
      ['Full:0-100', 'Incr:101-120', 'Incr:121-140'],
      140,
    ],
    [
      'only the latest full and what follows it',
      [full(50), incr(51, 100), full(100), incr(101, 120)],
      ['Full:0-100', 'Incr:101-120'],
      120,
    ],
    ['deltas older than the full snapshot left out', [incr(1, 60), incr(61, 100), full(100)], ['Full:0-100'], 100],
    ['a first delta that overlaps the full snapshot', [full(100), incr(90, 130)], ['Full:0-100', 'Incr:90-130'], 130],
    [
      'a delta nested in another is skipped, not a gap',
      [full(100), incr(101, 200), incr(150, 160), incr(201, 210)],
      ['Full:0-100', 'Incr:101-200', 'Incr:201-210'],
      210,
    ],
    [
      'a duplicate delta is applied once',
      [full(100), incr(101, 120), incr(101, 120, { createdOn: 1 })],
      ['Full:0-100', 'Incr:101-120'],
      120,
    ],
    ['the final full snapshot', [full(100), incr(101, 120), full(120, { final: true })], ['Full:0-120:final'], 120],
    [
      'a final and a plain full at the same revision: the final one',
      [full(120), full(120, { final: true })],
      ['Full:0-120:final'],
      120,
    ],
    [
      'a final delta last',
      [full(100), incr(101, 120), incr(121, 130, { final: true })],
      ['Full:0-100', 'Incr:101-120', 'Incr:121-130:final'],
      130,
    ],
    [
      'a final delta of the revision the store already held, kept as the mark',
      [full(100), incr(101, 120), incr(120, 120, { final: true })],
      ['Full:0-100', 'Incr:101-120', 'Incr:120-120:final'],
      120,
    ],
    [
      "a final delta of the full snapshot's revision",
      [full(120), incr(120, 120, { final: true })],
      ['Full:0-120', 'Incr:120-120:final'],
      120,
    ],
    [
      'an old final delta before a later full snapshot left out',
      [full(100), incr(101, 120, { final: true }), full(130)],
      ['Full:0-130'],
      130,
    ],
  ])('plans %s', (_case, snapshots, expected, lastRevision) => {
    // Act
    const plan = planRestore(snapshots);
    // Assess
    expect(names(restorePlanSnapshots(plan))).toEqual(expected);
    expect(plan.lastRevision).toBe(lastRevision);
  });

  it('refuses a gap and says which revisions are missing', () => {
    // Prepare
    const snapshots = [full(100), incr(101, 120), incr(131, 140)];
    // Act
    const act = () => planRestore(snapshots);
    // Assess
    expect(act).toThrow(RestorePlanGapError);
    expect(act).toThrow(/revisions 121\.\.130 are in no snapshot/);
    try {
      act();
    } catch (error) {
      expect((error as RestorePlanGapError).gap).toEqual({
        afterRevision: 120,
        nextStartRevision: 131,
        missingFrom: 121,
        missingTo: 130,
      });
      expect((error as RestorePlanGapError).code).toBe('RestorePlanGap');
    }
  });

  it('refuses a gap right after the full snapshot', () => {
    expect(() => planRestore([full(100), incr(102, 120)])).toThrow(RestorePlanGapError);
  });

  it.each([
    ['an empty store', []],
    ['only deltas', [incr(1, 10), incr(11, 20)]],
  ])('fails with NoFullSnapshotError for %s', (_case, snapshots) => {
    expect(() => planRestore(snapshots, { technicalID: 'shoot--dev--api1' })).toThrow(NoFullSnapshotError);
  });

  it('verifies the expected last revision', () => {
    expect(() => planRestore([full(100), incr(101, 120)], { expectedLastRevision: 130 })).toThrow(
      RestorePlanIncompleteError,
    );
    expect(planRestore([full(100), incr(101, 120)], { expectedLastRevision: 120 }).lastRevision).toBe(120);
  });

  /**
   * Histories like a sidecar writes them (full snapshots and deltas cut from one revision line), with
   * some deltas lost, duplicated or overlapping, in any order.
   */
  const history = fc
    .array(
      fc.record({
        length: fc.integer({ min: 1, max: 20 }),
        full: fc.boolean(),
        dropped: fc.boolean(),
        overlap: fc.nat({ max: 5 }),
      }),
      { minLength: 1, maxLength: 40 },
    )
    .chain((segments) => {
      const out: Snapshot[] = [];
      let at = 0;
      for (const seg of segments) {
        const last = at + seg.length;
        if (seg.full) out.push(full(last));
        else if (!seg.dropped) out.push(incr(Math.max(1, at + 1 - seg.overlap), last));
        at = last;
      }
      return fc.shuffledSubarray(out, { minLength: out.length, maxLength: out.length });
    });

  /** Independent oracle: the first revision after the full snapshot that no delta holds, if any. */
  function firstHole(fullSnap: Snapshot, snapshots: Snapshot[]): number | undefined {
    const deltas = snapshots.filter((s) => s.kind === 'Incr' && s.lastRevision > fullSnap.lastRevision);
    const top = Math.max(fullSnap.lastRevision, ...deltas.map((d) => d.lastRevision));
    for (let r = fullSnap.lastRevision + 1; r <= top; r++) {
      if (!deltas.some((d) => d.startRevision <= r && r <= d.lastRevision)) return r;
    }
    return undefined;
  }

  it('never has a revision gap and never includes a delta older than its full snapshot (property)', () => {
    fc.assert(
      fc.property(history, (snapshots) => {
        const fulls = snapshots.filter((s) => s.kind === 'Full');
        fc.pre(fulls.length > 0);
        const latestFull = fulls.reduce((a, b) => (b.lastRevision > a.lastRevision ? b : a));
        const hole = firstHole(latestFull, snapshots);
        if (hole !== undefined) {
          expect(() => planRestore(snapshots)).toThrow(RestorePlanGapError);
          return;
        }
        const plan = planRestore(snapshots);
        expect(plan.full.lastRevision).toBe(latestFull.lastRevision);
        let covered = plan.full.lastRevision;
        for (const delta of plan.deltas) {
          expect(delta.kind).toBe('Incr');
          expect(delta.lastRevision).toBeGreaterThan(plan.full.lastRevision);
          expect(delta.startRevision).toBeLessThanOrEqual(covered + 1);
          expect(delta.lastRevision).toBeGreaterThan(covered);
          covered = delta.lastRevision;
        }
        // Nothing restorable is left behind.
        expect(plan.lastRevision).toBe(Math.max(...snapshots.map((s) => s.lastRevision)));
      }),
      { numRuns: 500 },
    );
  });
});

describe('planRestore final flag', () => {
  it('is final only when nothing follows the final snapshot', () => {
    expect(planRestore([full(100, { final: true })]).final).toBe(true);
    expect(planRestore([full(100, { final: true }), incr(101, 110)]).final).toBe(false);
    expect(planRestore([full(100), incr(101, 110, { final: true })]).final).toBe(true);
    expect(planRestore([full(110), incr(110, 110, { final: true })]).final).toBe(true);
    expect(planRestore([full(100), incr(101, 110, { final: true }), incr(111, 115)]).final).toBe(false);
    expect(
      planRestore([full(100), incr(101, 110, { final: true }), full(115, { createdOn: 1_800_000_000 })]).final,
    ).toBe(false);
  });

  it('ends with the final delta a fenced source adds to any restorable history (property)', () => {
    const restorable = fc
      .array(fc.record({ length: fc.integer({ min: 1, max: 20 }), full: fc.boolean() }), {
        minLength: 1,
        maxLength: 30,
      })
      .map((segments) => {
        const out: Snapshot[] = [full(segments[0]!.length)];
        let at = segments[0]!.length;
        for (const seg of segments.slice(1)) {
          out.push(seg.full ? full(at + seg.length) : incr(at + 1, at + seg.length));
          at += seg.length;
        }
        return { out, at };
      });
    // Written since the store's last revision: 0 (a final delta of that revision again) or more.
    fc.assert(
      fc.property(restorable, fc.nat({ max: 20 }), ({ out, at }, written) => {
        const closing = incr(written === 0 ? at : at + 1, at + written, { final: true, createdOn: 1_800_000_000 });
        const plan = planRestore([...out, closing]);
        expect(plan.final).toBe(true);
        expect(plan.lastRevision).toBe(at + written);
        expect(restorePlanSnapshots(plan).at(-1)?.key).toBe(closing.key);
        expect(planRestore(out).final).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
