import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../core/errors.js';
import { planProbeRounds, roundTiming } from '../../../core/dwd/index.js';

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
    {
      name: 'late by an interval: the next round is due',
      nowMs: start + 20_000,
      offsetSeconds: 10,
      delayMs: 0,
      missed: true,
    },
  ])('$name', ({ nowMs, offsetSeconds, delayMs, missed }) => {
    expect(roundTiming({ invocationStartMs: start, offsetSeconds, intervalSeconds: 10, nowMs })).toEqual({
      delayMs,
      missed,
    });
  });
});
