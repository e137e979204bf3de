import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BETWEEN,
  destinationRecord,
  downtimeAims,
  formatAim,
  ISSUE_AIMS,
  KUBE_MARGIN_MS,
  KUBE_SHARES,
  kubeAims,
  kubeWindow,
  kubeWindowShares,
  parseSidecarLog,
  phaseIntervals,
  phaseShares,
  PHASES,
  shareFractions,
  SHARES,
  sourceRecord,
  stepsInWindow,
  summarize,
  supersededSnapshots,
  writeWindow,
  liveWriteWindow,
  type Acknowledgement,
  type MeasuredWindow,
  type Phase,
  type PhaseInterval,
  type Share,
} from '../../../scripts/downtime-figures.js';

const t0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const iso = (ms: number) => new Date(t0 + ms).toISOString();
const line = (ms: number, fields: Record<string, unknown>) => JSON.stringify({ time: iso(ms), ...fields });
const total = (shares: Record<Share, number>) => SHARES.reduce((sum, s) => sum + shares[s], 0);

describe('writeWindow', () => {
  it.each([
    {
      name: 'a clean switch',
      acks: [
        ['source', 0],
        ['source', 100],
        ['destination', 2_100],
        ['destination', 2_200],
      ],
      window: { from: 100, to: 2_100, ms: 2_000 },
    },
    {
      name: 'unsorted input',
      acks: [
        ['destination', 2_200],
        ['source', 100],
        ['destination', 2_100],
        ['source', 0],
      ],
      window: { from: 100, to: 2_100, ms: 2_000 },
    },
    {
      name: 'the same instant',
      acks: [
        ['source', 50],
        ['destination', 50],
      ],
      window: { from: 50, to: 50, ms: 0 },
    },
  ] as const)('$name', ({ acks, window }) => {
    const result = writeWindow(acks.map(([seed, at]) => ({ seed, at })));
    expect(result).toEqual({ ok: true, ...window });
  });

  it.each([
    {
      name: 'no source acknowledgement',
      acks: [{ seed: 'destination', at: 1 }],
      reason: 'the source acknowledged no write',
    },
    {
      name: 'no destination acknowledgement',
      acks: [{ seed: 'source', at: 1 }],
      reason: 'the destination acknowledged no write',
    },
    {
      name: "a source acknowledgement after the destination's first",
      acks: [
        { seed: 'source', at: 0 },
        { seed: 'destination', at: 10 },
        { seed: 'source', at: 25 },
      ],
      reason: "split brain: the source acknowledged a write 15 ms after the destination's first",
    },
  ] as const)('none with $name', ({ acks, reason }) => {
    expect(writeWindow(acks)).toEqual({ ok: false, reason });
  });

  it('is the gap between the last source and the first destination acknowledgement whenever they do not interleave', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 1_000 }), { minLength: 1, maxLength: 20 }),
        fc.array(fc.integer({ min: 0, max: 1_000 }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 0, max: 5_000 }),
        (src, dst, gap) => {
          const lastSource = Math.max(...src);
          const acks: Acknowledgement[] = [
            ...src.map((at) => ({ seed: 'source' as const, at })),
            ...dst.map((at) => ({ seed: 'destination' as const, at: lastSource + gap + at })),
          ];
          const result = writeWindow(acks);
          expect(result).toEqual({
            ok: true,
            from: lastSource,
            to: lastSource + gap + Math.min(...dst),
            ms: gap + Math.min(...dst),
          });
        },
      ),
    );
  });
});

describe('phaseShares', () => {
  const w = { from: 1_000, to: 11_000 };
  const p = (phase: Phase, from: number, to: number): PhaseInterval => ({ phase, from, to });

  it('divides a window of phases one after another, with the gaps between them', () => {
    const shares = phaseShares(w, [
      p('fence', 900, 1_500),
      p('final snapshot', 1_500, 3_000),
      p('copy', 4_000, 6_000),
      p('restore', 7_000, 9_000),
      p('activation', 9_000, 11_000),
    ]);
    expect(shares).toEqual({
      fence: 500,
      'final snapshot': 1_500,
      copy: 2_000,
      restore: 2_000,
      activation: 2_000,
      [BETWEEN]: 2_000,
    });
  });

  it('gives an overlap to the earlier phase: a copy waiting for the final snapshot is held up by the snapshot', () => {
    const shares = phaseShares(w, [
      p('fence', 1_000, 2_000),
      p('final snapshot', 2_000, 5_000),
      p('copy', 1_500, 8_000),
    ]);
    expect(shares).toMatchObject({ fence: 1_000, 'final snapshot': 3_000, copy: 3_000, [BETWEEN]: 3_000 });
  });

  it('leaves out what lies outside the window, and counts all of it as between without phases', () => {
    expect(phaseShares(w, [p('restore', 0, 1_000), p('copy', 11_000, 12_000)])[BETWEEN]).toBe(10_000);
    expect(phaseShares(w, [])).toEqual({
      fence: 0,
      'final snapshot': 0,
      copy: 0,
      restore: 0,
      activation: 0,
      [BETWEEN]: 10_000,
    });
  });

  it('is all zero for an empty window', () => {
    expect(total(phaseShares({ from: 5, to: 5 }, [p('copy', 0, 10)]))).toBe(0);
  });

  const arbitraryIntervals = fc.array(
    fc
      .record({
        phase: fc.constantFrom(...PHASES),
        from: fc.integer({ min: -1_000, max: 12_000 }),
        length: fc.integer({ min: 0, max: 6_000 }),
      })
      .map(({ phase, from, length }) => p(phase, from, from + length)),
    { maxLength: 12 },
  );

  it('always adds up to the window, and no phase gets more than its own time inside it', () => {
    fc.assert(
      fc.property(arbitraryIntervals, (intervals) => {
        const shares = phaseShares(w, intervals);
        expect(total(shares)).toBeCloseTo(w.to - w.from, 6);
        for (const share of SHARES) expect(shares[share]).toBeGreaterThanOrEqual(0);
        for (const phase of PHASES) {
          const own = intervals
            .filter((i) => i.phase === phase)
            .reduce((sum, i) => sum + Math.max(0, Math.min(i.to, w.to) - Math.max(i.from, w.from)), 0);
          expect(shares[phase]).toBeLessThanOrEqual(own + 1e-6);
        }
      }),
    );
  });

  it('gives the first phase all of its time inside the window', () => {
    fc.assert(
      fc.property(
        arbitraryIntervals,
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        (intervals, a, b) => {
          const fence = p('fence', w.from + Math.min(a, b), w.from + Math.max(a, b));
          expect(phaseShares(w, [...intervals.filter((i) => i.phase !== 'fence'), fence]).fence).toBeCloseTo(
            fence.to - fence.from,
            6,
          );
        },
      ),
    );
  });
});

describe("the sidecars' log lines", () => {
  const sourceLog = [
    'not json',
    line(-5_000, { event: 'snapshot', key: 'k0', kind: 'Incr', final: false, size: 10, ms: 5 }),
    line(2_000, { event: 'owner-check', result: 'not-owner' }),
    line(2_450, { event: 'fenced', refusingAfterMs: 26.7, privateReadyAfterMs: 447 }),
    line(3_300, { event: 'snapshot', key: 'k1', kind: 'Full', final: true, size: 12_000_000, ms: 840 }),
    '{"time": "half a line',
  ].join('\n');

  it('parses the JSON event lines with their times and skips the rest', () => {
    const events = parseSidecarLog(sourceLog);
    expect(events.map((e) => [e.event, e.time - t0])).toEqual([
      ['snapshot', -5_000],
      ['owner-check', 2_000],
      ['fenced', 2_450],
      ['snapshot', 3_300],
    ]);
  });

  it("finds the source's fence and final snapshot after the migration started", () => {
    expect(sourceRecord(parseSidecarLog(sourceLog), t0)).toEqual({
      fence: { from: t0 + 2_003, to: t0 + 2_450, refusingAfterMs: 26.7, by: 'stop' },
      finalSnapshot: { from: t0 + 2_460, to: t0 + 3_300, kind: 'Full', key: 'k1', bytes: 12_000_000 },
    });
    expect(sourceRecord(parseSidecarLog(sourceLog), t0 + 4_000)).toEqual({});
  });

  it("takes a single etcd's fence up to etcd gone from the public address, its private start left out", () => {
    const log = [
      line(2_450, { event: 'fenced', by: 'alarm', refusingAfterMs: 2.5, stoppedAfterMs: 61, finalPrepared: true }),
      line(2_900, { event: 'fenced-private-ready', privateReadyAfterMs: 511 }),
    ].join('\n');
    expect(sourceRecord(parseSidecarLog(log), t0).fence).toEqual({
      from: t0 + 2_389,
      to: t0 + 2_450,
      refusingAfterMs: 2.5,
      by: 'alarm',
    });
  });

  it("finds the destination's restore, its snapshot of the restored etcd and its unfence", () => {
    const log = [
      line(9_000, {
        event: 'restored',
        revision: 42,
        final: true,
        timings: { download: 279, restore: 115, start: 159, replay: 191, total: 797 },
      }),
      line(9_700, { event: 'snapshot', kind: 'Full', final: false, size: 12_000_000, ms: 690 }),
      line(9_900, { event: 'watchdog-action', action: 'start-snapshotter', ms: 3 }),
      line(9_950, { event: 'watchdog-action', action: 'unfence', ms: 205 }),
    ].join('\n');
    expect(destinationRecord(parseSidecarLog(log), t0)).toEqual({
      restore: {
        from: t0 + 8_203,
        to: t0 + 9_000,
        event: 'restored',
        final: true,
        timings: { download: 279, restore: 115, start: 159, replay: 191, total: 797 },
      },
      postRestoreSnapshot: { ms: 690, bytes: 12_000_000 },
      unfence: { at: t0 + 9_950, ms: 205 },
    });
    expect(destinationRecord(parseSidecarLog(log), t0 + 9_001)).toEqual({});
  });

  it('takes the catch-up of a restore ahead for the restore, not the restore ahead itself', () => {
    const log = [
      line(1_000, { event: 'restored-ahead', revision: 40, final: false, timings: { total: 5_000 } }),
      line(9_000, {
        event: 'caught-up',
        revision: 42,
        final: true,
        caughtUp: true,
        aheadRevision: 40,
        timings: { download: 20, restore: 0, start: 0, replay: 30, total: 60 },
      }),
    ].join('\n');
    expect(destinationRecord(parseSidecarLog(log), t0).restore).toEqual({
      from: t0 + 8_940,
      to: t0 + 9_000,
      event: 'caught-up',
      final: true,
      timings: { download: 20, restore: 0, start: 0, replay: 30, total: 60 },
    });
  });
});

describe('phaseIntervals', () => {
  const steps = [
    { id: 'set-owner-destination', startedAt: iso(1_000), endedAt: iso(1_050) },
    { id: 'copy-snapshots', startedAt: iso(1_100), endedAt: iso(6_000) },
    { id: 'restore-etcd', startedAt: iso(6_100), endedAt: iso(9_500) },
    { id: 'finalize' },
  ];

  it('takes seed-side phases from the logs, the copy from the record, and activation from the last end to the first destination write', () => {
    const at = (ms: number) => t0 + ms;
    const window = { from: at(2_000), to: at(10_000) };
    const intervals = phaseIntervals({
      window,
      source: {
        fence: { from: at(1_900), to: at(2_400), refusingAfterMs: 20, by: 'alarm' },
        finalSnapshot: { from: at(2_400), to: at(3_300), kind: 'Full', key: 'k', bytes: 1 },
      },
      destination: { restore: { from: at(8_200), to: at(9_000), event: 'restored', timings: {}, final: true } },
      steps,
      copySteps: ['copy-snapshots'],
    });
    expect(intervals).toEqual([
      { phase: 'fence', from: at(1_900), to: at(2_400) },
      { phase: 'final snapshot', from: at(2_400), to: at(3_300) },
      { phase: 'copy', from: at(1_100), to: at(6_000) },
      { phase: 'restore', from: at(8_200), to: at(9_000) },
      { phase: 'activation', from: at(9_000), to: at(10_000) },
    ]);
    // The copy step started before the fence, waiting for the final snapshot: that time is the fence's and the snapshot's.
    expect(phaseShares(window, intervals)).toEqual({
      fence: 400,
      'final snapshot': 900,
      copy: 2_700,
      restore: 800,
      activation: 1_000,
      [BETWEEN]: 2_200,
    });
  });

  it("ignores phases that end after the destination's first write when it places activation", () => {
    const window = { from: t0, to: t0 + 1_000 };
    const intervals = phaseIntervals({
      window,
      source: {},
      destination: { restore: { from: t0 + 500, to: t0 + 2_000, event: 'restored', timings: {}, final: true } },
      steps: [],
      copySteps: [],
    });
    expect(intervals.at(-1)).toEqual({ phase: 'activation', from: t0, to: t0 + 1_000 });
  });

  it('starts activation at the window when nothing ended inside it', () => {
    const intervals = phaseIntervals({
      window: { from: 5_000, to: 6_000 },
      source: {},
      destination: {},
      steps: [],
      copySteps: ['copy-snapshots'],
    });
    expect(intervals).toEqual([{ phase: 'activation', from: 5_000, to: 6_000 }]);
  });
});

describe('stepsInWindow', () => {
  it("is each step's time inside the window, in record order, without the steps outside it or without times", () => {
    const steps = [
      { id: 'a', startedAt: iso(0), endedAt: iso(1_000) },
      { id: 'b', startedAt: iso(1_000), endedAt: iso(3_000) },
      { id: 'c', startedAt: iso(3_000), endedAt: iso(3_500) },
      { id: 'd', startedAt: iso(4_000), endedAt: iso(9_000) },
      { id: 'e' },
    ];
    expect(stepsInWindow({ from: t0 + 2_000, to: t0 + 5_000 }, steps)).toEqual([
      { id: 'b', ms: 1_000 },
      { id: 'c', ms: 500 },
      { id: 'd', ms: 1_000 },
    ]);
  });
});

describe('supersededSnapshots', () => {
  const snap = (key: string, kind: 'Full' | 'Incr', startRevision: number, lastRevision: number, final = false) => ({
    key,
    name: key,
    technicalID: 'shoot--p--s',
    kind,
    startRevision,
    lastRevision,
    createdOn: 0,
    compressionSuffix: '' as const,
    final,
  });

  it('keeps the latest full snapshot and the deltas after it, and nothing else', () => {
    const listing = [
      snap('f1', 'Full', 0, 100),
      snap('d1', 'Incr', 101, 150),
      snap('f2', 'Full', 0, 150, true),
      snap('f3', 'Full', 0, 160),
      snap('d2', 'Incr', 151, 160),
      snap('d3', 'Incr', 161, 170),
      snap('d4', 'Incr', 171, 180),
    ];
    expect(supersededSnapshots(listing).map((s) => s.key)).toEqual(['f1', 'd1', 'f2', 'd2']);
  });

  it('deletes nothing without a full snapshot', () => {
    expect(supersededSnapshots([snap('d1', 'Incr', 1, 5)])).toEqual([]);
  });
});

describe('summaries', () => {
  it('summarizes runs by median and maximum', () => {
    expect(summarize([3, 1, 2, 10])).toEqual({ runs: 4, median: 2.5, max: 10 });
    expect(summarize([])).toMatchObject({ runs: 0 });
  });

  it('gives each share its part of all windows together', () => {
    const zero = Object.fromEntries(SHARES.map((s) => [s, 0])) as Record<Share, number>;
    const fractions = shareFractions([
      { ...zero, copy: 3, [BETWEEN]: 1 },
      { ...zero, copy: 1, restore: 5 },
    ]);
    expect(fractions).toMatchObject({ copy: 0.4, restore: 0.5, [BETWEEN]: 0.1, fence: 0 });
    expect(Object.values(shareFractions([zero])).every((f) => f === 0)).toBe(true);
  });
});

describe('liveWriteWindow', () => {
  const ack = (at: number, seed: 'source' | 'destination'): Acknowledgement => ({ at, seed });

  it('is the longest time without any acknowledgement from before the request to after the end, whichever seed answered', () => {
    // Both seeds answer while the cluster walks: a source answer after the destination's first is no split brain.
    const acks = [
      ack(900, 'source'),
      ack(1_100, 'destination'),
      ack(1_150, 'source'),
      ack(1_600, 'destination'),
      ack(2_600, 'destination'),
    ];
    expect(liveWriteWindow(acks, 1_000, 2_000)).toEqual({ ok: true, from: 1_600, to: 2_600, ms: 1_000 });
    expect(liveWriteWindow(acks, 1_000, 1_500)).toEqual({ ok: true, from: 1_150, to: 1_600, ms: 450 });
  });

  it('has none without an acknowledgement on each side of the migration', () => {
    expect(liveWriteWindow([ack(1_500, 'source')], 1_000, 2_000)).toMatchObject({ ok: false });
    expect(liveWriteWindow([ack(500, 'source')], 1_000, 2_000)).toMatchObject({ ok: false });
  });
});

describe('downtimeAims', () => {
  const settings = { ...ISSUE_AIMS, fenceBoundMs: 28_000 };
  const runs = (sizeMb: number, path: 'good' | 'bad', ...ms: number[]): MeasuredWindow[] =>
    ms.map((v) => ({ sizeMb, path, ms: v }));

  it('judges the good path at 500 MB, the 500 / 10 MB ratio per path and the bad path against the fence bound plus 3 s', () => {
    const aims = downtimeAims(
      [
        ...runs(10, 'good', 2_400, 2_200, 2_300),
        ...runs(500, 'good', 2_500, 2_900, 3_100),
        ...runs(10, 'bad', 10_000, 12_000),
        ...runs(500, 'bad', 30_000, 32_000),
      ],
      settings,
    );
    expect(aims.map((a) => [a.label, a.value, a.met])).toEqual([
      ['good path at 500 MB, median window', 2_900, true],
      ['good path at 500 MB, maximum window', 3_100, false],
      ['good path, median window at 500 MB / at 10 MB', 2_900 / 2_300, true],
      ['bad path, median window at 500 MB / at 10 MB', 31_000 / 11_000, false],
      ['bad path (live source) at 10 MB, median window', 11_000, true],
      ['bad path (live source) at 10 MB, maximum window', 12_000, true],
      ['bad path (live source) at 500 MB, median window', 31_000, true],
      ['bad path (live source) at 500 MB, maximum window', 32_000, false],
    ]);
    expect(aims.find((a) => a.label.startsWith('bad path (live'))!.limit).toBe(31_000);
  });

  it('judges the live path, where it was measured, at every size by its median and maximum window, and its ratio', () => {
    const live = (sizeMb: number, ...ms: number[]): MeasuredWindow[] =>
      ms.map((v) => ({ sizeMb, path: 'live', ms: v }));
    const aims = downtimeAims([...runs(10, 'good', 2_000), ...live(10, 200, 300, 1_200), ...live(500, 400)], settings);
    expect(aims.filter((a) => a.label.startsWith('live')).map((a) => [a.label, a.value, a.limit, a.met])).toEqual([
      ['live path, median window at 500 MB / at 10 MB', 400 / 300, 1.3, false],
      ['live path at 10 MB, median window', 300, 500, true],
      ['live path at 10 MB, maximum window', 1_200, 1_000, false],
      ['live path at 500 MB, median window', 400, 500, true],
      ['live path at 500 MB, maximum window', 400, 1_000, true],
    ]);
    expect(downtimeAims(runs(10, 'good', 2_000), settings).some((a) => a.label.startsWith('live'))).toBe(false);
  });

  it('says which aims a smaller run could not judge', () => {
    const aims = downtimeAims(runs(10, 'good', 5_000), settings);
    expect(aims.filter((a) => a.met === undefined).map((a) => a.label)).toEqual([
      'good path at 500 MB, median window',
      'good path at 500 MB, maximum window',
      'good path, median window at 500 MB / at 10 MB',
      'bad path, median window at 500 MB / at 10 MB',
      'bad path (live source) at 500 MB, median window',
      'bad path (live source) at 500 MB, maximum window',
    ]);
    expect(formatAim(aims[0]!)).toBe(
      'good path at 500 MB, median window: - (aim at most 3,000 ms): not measured in this run',
    );
  });

  it('prints the verdict next to the figure', () => {
    expect(formatAim({ label: 'x', value: 3_456.4, limit: 3_000, unit: 'ms', met: false })).toBe(
      'x: 3,456 ms (aim at most 3,000 ms): not met',
    );
    expect(formatAim({ label: 'r', value: 1.234, limit: 1.3, unit: 'x', met: true })).toBe(
      'r: 1.23x (aim at most 1.30x): met',
    );
  });
});

describe('kubeWindow', () => {
  it('is the longest gap between acknowledgements that ends after the request', () => {
    // A longer gap before the request (a slow start) is not the migration's.
    const at = [0, 5_000, 5_100, 5_200, 9_000, 9_100];
    expect(kubeWindow(at, { after: 5_150, servedAt: 8_000 })).toEqual({ ok: true, from: 5_200, to: 9_000, ms: 3_800 });
  });

  it('spans the request when the last acknowledgement before it is the gap start', () => {
    expect(kubeWindow([100, 200, 4_000], { after: 300, servedAt: 3_000 })).toEqual({
      ok: true,
      from: 200,
      to: 4_000,
      ms: 3_800,
    });
  });

  it('needs an acknowledgement before the request and one after the destination served', () => {
    expect(kubeWindow([500, 600], { after: 100, servedAt: 400 })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/before/),
    });
    expect(kubeWindow([10, 20], { after: 100, servedAt: 200 })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/after/),
    });
    // Writes after the request but all before the fence: the window has not ended yet, whatever the gaps.
    expect(kubeWindow([10, 200, 300, 400], { after: 100, servedAt: 2_000 })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/destination served/),
    });
  });

  it('never reports less than any gap ending after the request, and ends after the destination served (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 100_000 }), { minLength: 2 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        (at, after, served) => {
          const servedAt = Math.max(after, served);
          const w = kubeWindow(at, { after, servedAt });
          const sorted = [...at].sort((a, b) => a - b);
          if (!w.ok) return;
          for (let k = 0; k + 1 < sorted.length; k++)
            if (sorted[k + 1]! > after) expect(w.ms).toBeGreaterThanOrEqual(sorted[k + 1]! - sorted[k]!);
          expect(sorted).toContain(w.to);
          expect(sorted.some((t) => t > servedAt)).toBe(true);
        },
      ),
    );
  });
});

describe('kubeWindowShares', () => {
  const sum = (shares: Record<string, number>) => KUBE_SHARES.reduce((n, s) => n + shares[s]!, 0);

  it('divides the window into the etcd window, kube-apiserver, the record switch and the reconnect', () => {
    const shares = kubeWindowShares(
      { from: 900, to: 6_000 },
      { etcd: { from: 1_000, to: 2_000 }, apiServerReadyAt: 3_500, switchedAt: 4_000 },
    );
    expect(shares).toEqual({
      'etcd window': 1_000,
      'kube-apiserver': 1_500,
      'record switch': 500,
      reconnect: 2_000,
      [BETWEEN]: 100,
    });
  });

  it('a kube-apiserver ready before etcd served, or a switch before it was ready, takes no time', () => {
    const shares = kubeWindowShares(
      { from: 1_000, to: 3_000 },
      { etcd: { from: 1_000, to: 2_000 }, apiServerReadyAt: 1_500, switchedAt: 1_800 },
    );
    expect(shares).toMatchObject({ 'etcd window': 1_000, 'kube-apiserver': 0, 'record switch': 0, reconnect: 1_000 });
  });

  it('a window that ended before the switch waited for none: after kube-apiserver was ready, it is all reconnect', () => {
    const shares = kubeWindowShares(
      { from: 900, to: 3_000 },
      { etcd: { from: 1_000, to: 2_000 }, apiServerReadyAt: 2_400, switchedAt: 4_000 },
    );
    expect(shares).toMatchObject({ 'etcd window': 1_000, 'kube-apiserver': 400, 'record switch': 0, reconnect: 600 });
  });

  it('adds up to the window (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: 6, maxLength: 6 }),
        ([a, b, c, d, e, f]) => {
          const [from, to] = [Math.min(a!, b!), Math.max(a!, b!)];
          const [ef, et] = [Math.min(c!, d!), Math.max(c!, d!)];
          const shares = kubeWindowShares(
            { from, to },
            { etcd: { from: ef, to: et }, apiServerReadyAt: e, switchedAt: f },
          );
          expect(sum(shares)).toBe(to - from);
        },
      ),
    );
  });
});

describe('kubeAims', () => {
  it('holds each size and path to its own etcd-level median plus the margin', () => {
    const aims = kubeAims([
      { sizeMb: 10, path: 'good', etcdMs: 1_000, kubeMs: 2_500 },
      { sizeMb: 10, path: 'good', etcdMs: 1_200, kubeMs: 3_500 },
      { sizeMb: 10, path: 'good', etcdMs: 1_100, kubeMs: 2_900 },
      { sizeMb: 10, path: 'bad', etcdMs: 6_000, kubeMs: 9_000 },
    ]);
    expect(aims.map((a) => [a.value, a.limit, a.met])).toEqual([
      [2_900, 1_100 + KUBE_MARGIN_MS, true],
      [9_000, 6_000 + KUBE_MARGIN_MS, false],
    ]);
  });
});
