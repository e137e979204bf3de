import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../core/errors.js';
import { planBatches, planFanOut, planProbeRounds, roundTiming, splitIntoBatches } from '../../../core/dwd/index.js';

describe('planProbeRounds', () => {
  it.each([
    { intervalSeconds: 10, windowSeconds: 60, offsets: [0, 10, 20, 30, 40, 50] },
    { intervalSeconds: 60, windowSeconds: 60, offsets: [0] },
    { intervalSeconds: 15, windowSeconds: 60, offsets: [0, 15, 30, 45] },
  ])('$intervalSeconds s in $windowSeconds s', ({ intervalSeconds, windowSeconds, offsets }) => {
    expect(planProbeRounds({ intervalSeconds, windowSeconds })).toEqual(offsets);
  });

  it('accepts fractional intervals without drift', () => {
    const offsets = planProbeRounds({ intervalSeconds: 0.1, windowSeconds: 0.5 });
    expect(offsets).toHaveLength(5);
    offsets.forEach((o, k) => expect(o).toBeCloseTo(k * 0.1, 12));
  });

  it.each([
    { intervalSeconds: 25, windowSeconds: 60 },
    { intervalSeconds: 120, windowSeconds: 60 },
    { intervalSeconds: 0, windowSeconds: 60 },
    { intervalSeconds: 10, windowSeconds: -60 },
    { intervalSeconds: Number.NaN, windowSeconds: 60 },
  ])('rejects $intervalSeconds s in $windowSeconds s', (options) => {
    expect(() => planProbeRounds(options)).toThrow(ValidationError);
  });
});

describe('roundTiming', () => {
  const start = 1_000_000;
  it.each([
    { name: 'early', nowMs: start + 5_000, offsetSeconds: 10, delayMs: 5_000, missed: false },
    { name: 'due', nowMs: start + 10_000, offsetSeconds: 10, delayMs: 0, missed: false },
    { name: 'late within an interval', nowMs: start + 19_999, offsetSeconds: 10, delayMs: 0, missed: false },
    { name: 'late by an interval: the next round is due', nowMs: start + 20_000, offsetSeconds: 10, delayMs: 0, missed: true },
  ])('$name', ({ nowMs, offsetSeconds, delayMs, missed }) => {
    expect(roundTiming({ invocationStartMs: start, offsetSeconds, intervalSeconds: 10, nowMs })).toEqual({ delayMs, missed });
  });
});

describe('planBatches', () => {
  it.each([
    { total: 0, maxBatchSize: 10, sizes: [] },
    { total: 10, maxBatchSize: 10, sizes: [10] },
    { total: 11, maxBatchSize: 10, sizes: [6, 5] },
    { total: 1000, maxBatchSize: 300, sizes: [250, 250, 250, 250] },
    { total: 7, maxBatchSize: 3, sizes: [3, 2, 2] },
  ])('$total items, at most $maxBatchSize per batch', ({ total, maxBatchSize, sizes }) => {
    expect(planBatches({ total, maxBatchSize }).map((b) => b.end - b.start)).toEqual(sizes);
  });

  it.each([
    { total: -1, maxBatchSize: 10 },
    { total: 1.5, maxBatchSize: 10 },
    { total: 10, maxBatchSize: 0 },
  ])('rejects total $total, maxBatchSize $maxBatchSize', (options) => {
    expect(() => planBatches(options)).toThrow(ValidationError);
  });

  it('covers every item exactly once, in order, in the fewest balanced batches', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 1, max: 600 }), (total, maxBatchSize) => {
        const batches = planBatches({ total, maxBatchSize });
        expect(batches).toHaveLength(Math.ceil(total / maxBatchSize));
        let next = 0;
        for (const b of batches) {
          expect(b.start).toBe(next);
          expect(b.end - b.start).toBeGreaterThan(0);
          expect(b.end - b.start).toBeLessThanOrEqual(maxBatchSize);
          next = b.end;
        }
        expect(next).toBe(total);
        const sizes = batches.map((b) => b.end - b.start);
        if (sizes.length > 0) expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
      }),
    );
  });

  it('splitIntoBatches keeps the items and their order', () => {
    fc.assert(
      fc.property(fc.array(fc.string()), fc.integer({ min: 1, max: 20 }), (items, maxBatchSize) => {
        const batches = splitIntoBatches(items, { maxBatchSize });
        expect(batches.flat()).toEqual(items);
        expect(batches.every((b) => b.length <= maxBatchSize)).toBe(true);
      }),
    );
  });
});

describe('planFanOut', () => {
  it('sizes 1,000 shoots so a worst-case round fits the 10 s interval', () => {
    // Act
    const plan = planFanOut({ shootCount: 1000, concurrencyPerWorker: 50, probeTimeoutSeconds: 2, intervalSeconds: 10 });

    // Assess
    expect(plan.capacityPerWorker).toBe(250);
    expect(plan.batches).toHaveLength(4);
    expect(plan.worstCaseRoundSeconds).toBe(10);
  });

  it.each([
    { maxShootsPerWorker: 100, workers: 10 },
    { maxShootsPerWorker: 1000, workers: 4 },
  ])('caps workers at $maxShootsPerWorker shoots', ({ maxShootsPerWorker, workers }) => {
    const plan = planFanOut({ shootCount: 1000, concurrencyPerWorker: 50, probeTimeoutSeconds: 2, intervalSeconds: 10, maxShootsPerWorker });
    expect(plan.batches).toHaveLength(workers);
  });

  it('has no batches and no round time without shoots', () => {
    expect(planFanOut({ shootCount: 0, concurrencyPerWorker: 5, probeTimeoutSeconds: 1, intervalSeconds: 10 })).toEqual({
      capacityPerWorker: 50,
      batches: [],
      worstCaseRoundSeconds: 0,
    });
  });

  it('rejects a probe timeout longer than the interval', () => {
    expect(() => planFanOut({ shootCount: 1, concurrencyPerWorker: 5, probeTimeoutSeconds: 11, intervalSeconds: 10 })).toThrow(/probeTimeoutSeconds/);
  });

  it('never plans a round longer than the interval', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20000 }),
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 1, max: 10 }),
        fc.option(fc.integer({ min: 1, max: 1000 }), { nil: undefined }),
        (shootCount, concurrencyPerWorker, probeTimeoutSeconds, maxShootsPerWorker) => {
          const plan = planFanOut({ shootCount, concurrencyPerWorker, probeTimeoutSeconds, intervalSeconds: 10, maxShootsPerWorker });
          expect(plan.worstCaseRoundSeconds).toBeLessThanOrEqual(10);
          expect(plan.batches.reduce((n, b) => n + b.end - b.start, 0)).toBe(shootCount);
        },
      ),
    );
  });
});
