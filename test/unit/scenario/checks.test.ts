import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  acknowledgedRate,
  checkLossBounded,
  checkNoAcknowledgedWriteLost,
  checkNoSplitBrain,
} from '../../../harness/scenario/checks.js';
import type { AcknowledgedWrite, SeedRole } from '../../../harness/scenario/writer.js';

const t0 = Date.UTC(2025, 0, 1);
const ack = (n: number, seed: SeedRole, at: number): AcknowledgedWrite => ({
  key: `w/${n}`,
  value: `${seed}-${n}`,
  revision: n + 1,
  sentAt: t0 + at - 1,
  at: t0 + at,
  seed,
});
const content = (...writes: AcknowledgedWrite[]) => new Map(writes.map((w) => [w.key, w.value]));

describe('checkNoSplitBrain', () => {
  it.each([
    { name: 'only the source', writes: [ack(0, 'source', 0), ack(1, 'source', 10)], ok: true, after: [] },
    {
      name: 'a clean switch',
      writes: [ack(0, 'source', 0), ack(1, 'destination', 10), ack(2, 'destination', 20)],
      ok: true,
      after: [],
    },
    {
      name: 'the source acknowledges after the switch',
      writes: [ack(0, 'source', 0), ack(1, 'destination', 10), ack(2, 'source', 20), ack(3, 'source', 30)],
      ok: false,
      after: ['w/2', 'w/3'],
    },
    {
      name: 'unsorted input',
      writes: [ack(3, 'source', 30), ack(1, 'destination', 10), ack(0, 'source', 0)],
      ok: false,
      after: ['w/3'],
    },
    {
      name: 'the same instant is not after',
      writes: [ack(0, 'destination', 10), ack(1, 'source', 10)],
      ok: true,
      after: [],
    },
  ])('$name', ({ writes, ok, after }) => {
    const report = checkNoSplitBrain(writes);
    expect(report.ok).toBe(ok);
    expect(report.sourceAcksAfter.map((w) => w.key)).toEqual(after);
    if (!ok) expect(report.summary).toContain(after[0]);
  });

  it('holds exactly when every source acknowledgement precedes every destination one', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            seed: fc.constantFrom<SeedRole>('source', 'destination'),
            at: fc.integer({ min: 0, max: 10_000 }),
          }),
          { maxLength: 40 },
        ),
        (raw) => {
          const writes = raw.map((w, i) => ack(i, w.seed, w.at));
          const firstDestination = Math.min(...writes.filter((w) => w.seed === 'destination').map((w) => w.at));
          const expected = writes.every((w) => w.seed === 'destination' || w.at <= firstDestination);
          expect(checkNoSplitBrain(writes).ok).toBe(expected);
        },
      ),
    );
  });
});

describe('checkNoAcknowledgedWriteLost', () => {
  const writes = [ack(0, 'source', 0), ack(1, 'source', 10), ack(2, 'destination', 20)];
  it.each([
    { name: 'everything present', destination: content(...writes), lost: [] },
    { name: 'a source write missing', destination: content(writes[0]!, writes[2]!), lost: ['w/1'] },
    { name: 'a destination write missing', destination: content(writes[0]!, writes[1]!), lost: ['w/2'] },
    {
      name: 'a key with another value',
      destination: new Map([...content(...writes), ['w/0', 'other']]),
      lost: ['w/0'],
    },
    { name: 'an empty destination', destination: new Map<string, string>(), lost: ['w/0', 'w/1', 'w/2'] },
  ])('$name', ({ destination, lost }) => {
    const report = checkNoAcknowledgedWriteLost(writes, destination);
    expect(report.lost.map((w) => w.key)).toEqual(lost);
    expect(report.ok).toBe(lost.length === 0);
    for (const key of lost.slice(0, 5)) expect(report.summary).toContain(key);
  });

  it('extra keys in the destination (unacknowledged writes that were applied) are no loss', () => {
    expect(checkNoAcknowledgedWriteLost(writes, new Map([...content(...writes), ['w/99', 'source-99']])).ok).toBe(true);
  });
});

describe('checkLossBounded', () => {
  // The source acknowledged every 100 ms until 1 s, then the destination took over.
  const writes = [...Array.from({ length: 11 }, (_, i) => ack(i, 'source', i * 100)), ack(11, 'destination', 1_500)];
  const keep = (predicate: (w: AcknowledgedWrite) => boolean) => content(...writes.filter(predicate));
  it.each([
    { name: 'nothing lost', destination: keep(() => true), spanMs: 200, ok: true, outside: [] },
    {
      name: 'the last 200 ms lost, delta 200 ms',
      destination: keep((w) => w.seed === 'destination' || w.at < t0 + 800),
      spanMs: 200,
      ok: true,
      outside: [],
    },
    {
      name: 'the last 300 ms lost, delta 200 ms',
      destination: keep((w) => w.seed === 'destination' || w.at < t0 + 700),
      spanMs: 200,
      ok: false,
      outside: ['w/7'],
    },
    { name: 'a hole early on', destination: keep((w) => w.key !== 'w/2'), spanMs: 500, ok: false, outside: ['w/2'] },
    {
      name: 'a destination write lost',
      destination: keep((w) => w.seed === 'source'),
      spanMs: 5_000,
      ok: false,
      outside: ['w/11'],
    },
  ])('$name', ({ destination, spanMs, ok, outside }) => {
    const report = checkLossBounded(writes, destination, { spanMs });
    expect(report.ok).toBe(ok);
    expect(report.outsideBound.map((w) => w.key)).toEqual(outside);
    expect(report.sourceLastAckAt).toBe(t0 + 1_000);
    expect(report.windowStart).toBe(t0 + 1_000 - spanMs);
  });

  it("a lost write at or below the store's last revision is outside the bound, however recent", () => {
    // w/9 and w/10 (revisions 10 and 11) lost; the store held revision 10.
    const destination = keep((w) => w.seed === 'destination' || w.at < t0 + 900);
    expect(checkLossBounded(writes, destination, { spanMs: 200, storeLastRevision: 9 }).ok).toBe(true);
    const report = checkLossBounded(writes, destination, { spanMs: 200, storeLastRevision: 10 });
    expect(report.ok).toBe(false);
    expect(report.outsideBound.map((w) => w.key)).toEqual(['w/9']);
  });

  it('losing a suffix of the source writes shorter than the span always passes, and (b) fails iff anything was lost', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 0, max: 3_000 }),
        fc.integer({ min: 1, max: 3_000 }),
        (gaps, lostSpan, spanMs) => {
          let at = 0;
          const source = gaps.map((gap, i) => ack(i, 'source', (at += gap)));
          const last = source.at(-1)!.at;
          const destination = content(...source.filter((w) => w.at < last - lostSpan));
          const lostCount = source.length - destination.size;
          expect(checkNoAcknowledgedWriteLost(source, destination).ok).toBe(lostCount === 0);
          const bounded = checkLossBounded(source, destination, { spanMs });
          expect(bounded.lost).toHaveLength(lostCount);
          if (lostSpan <= spanMs) expect(bounded.ok).toBe(true);
        },
      ),
    );
  });
});

describe('acknowledgedRate', () => {
  it('counts acknowledgements a second in a closed window', () => {
    const writes = Array.from({ length: 100 }, (_, i) => ack(i, 'source', i * 10));
    expect(acknowledgedRate(writes, t0, t0 + 990)).toBeCloseTo(100 / 0.99);
    expect(acknowledgedRate(writes, t0 + 5, t0 + 5)).toBe(0);
  });
});
