import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planCatchUp, planRestore, type Snapshot } from '../../../core/snapshots/index.js';
import { full, incr } from './helpers.js';

describe('planCatchUp', () => {
  const f100 = full(100);
  const d120 = incr(101, 120);
  const d140 = incr(121, 140);
  const final = incr(141, 150, { final: true });

  it.each<[string, Snapshot[], number, { kind: string; deltas?: string[] }]>([
    [
      'the final delta alone after a restore ahead up to the last copied delta',
      [f100, d120, d140, final],
      140,
      { kind: 'replay', deltas: [final.key] },
    ],
    [
      'every delta since the restore ahead',
      [f100, d120, d140, final],
      100,
      { kind: 'replay', deltas: [d120.key, d140.key, final.key] },
    ],
    [
      'a delta that overlaps the revision held',
      [f100, incr(101, 130), incr(131, 150, { final: true })],
      120,
      { kind: 'replay', deltas: [incr(101, 130).key, incr(131, 150, { final: true }).key] },
    ],
    [
      'nothing, when the final delta repeats the revision held',
      [f100, d120, incr(120, 120, { final: true })],
      120,
      { kind: 'replay', deltas: [] },
    ],
    [
      'a restore, when the source took a new full snapshot since',
      [full(90), d120, full(130), incr(131, 150, { final: true })],
      120,
      { kind: 'restore' },
    ],
    ["a restore, when etcd is past the snapshots' end", [f100, d120], 125, { kind: 'restore' }],
  ])('plans %s', (_case, listing, revision, expected) => {
    // Act
    const plan = planCatchUp({
      plan: planRestore(listing),
      aheadFullKey: listing.find((s) => s.kind === 'Full' && s.lastRevision <= 100)!.key,
      revision,
    });
    // Assess
    expect(plan.kind).toBe(expected.kind);
    if (plan.kind === 'replay') expect(plan.deltas.map((d) => d.key)).toEqual(expected.deltas);
    else expect(plan.reason).toMatch(/now start from .*Full-00000000-00000130|past the snapshots' end at 120/);
  });

  it('restores when the deltas leave a gap above the revision held', () => {
    // Prepare: a restore plan whose deltas skip revisions 121..130 (as a hand-made plan could).
    const plan = { ...planRestore([f100, d120]), deltas: [d120, incr(131, 140)], lastRevision: 140 };
    // Act
    const result = planCatchUp({ plan, aheadFullKey: f100.key, revision: 120 });
    // Assess
    expect(result).toMatchObject({ kind: 'restore', reason: expect.stringContaining('starts at 131') });
  });

  it("replays exactly the deltas that end past the revision held, and they reach the plan's end (property)", () => {
    const chain = fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 20 }).map((lengths) => {
      const out: Snapshot[] = [full(100)];
      let at = 100;
      for (const length of lengths) {
        out.push(incr(at + 1, at + length));
        at += length;
      }
      return { out, at };
    });
    fc.assert(
      fc.property(chain, fc.nat({ max: 1_000 }), ({ out, at }, offset) => {
        const revision = 100 + (offset % (at - 100 + 1));
        const plan = planRestore(out);
        const result = planCatchUp({ plan, aheadFullKey: out[0]!.key, revision });
        expect(result.kind).toBe('replay');
        if (result.kind !== 'replay') return;
        expect(result.deltas.every((d) => d.lastRevision > revision)).toBe(true);
        expect(result.deltas.length).toBe(plan.deltas.filter((d) => d.lastRevision > revision).length);
        expect(result.deltas.at(-1)?.lastRevision ?? revision).toBe(at);
      }),
    );
  });
});
