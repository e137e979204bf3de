import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  LinkDirection,
  LinkModelError,
  requestMs,
  transferMs,
  validateLinkModel,
} from '../../../harness/scenario/link-model.js';

const model = { latencyMs: 30, bytesPerSecond: 100e6 };

describe('link model arithmetic', () => {
  it('charges bytes at the rate and a request the round trip once', () => {
    expect(transferMs(model, 100e6)).toBe(1_000);
    expect(transferMs(model, 0)).toBe(0);
    // A 16 MiB range read: the round trip plus the body at 100 MB/s.
    expect(requestMs(model, 300, 16 * 2 ** 20)).toBeCloseTo(30 + 0.003 + 167.77216, 6);
    expect(requestMs(model, 0, 0)).toBe(30);
  });

  it('delivers a chunk on an idle link half the round trip after its transfer', () => {
    const link = new LinkDirection(model);
    expect(link.send(1_000, 1e6)).toBe(1_000 + 10 + 15);
    // Idle again long after: no queueing carried over.
    expect(link.send(5_000, 0)).toBe(5_015);
  });

  it('queues back-to-back chunks behind each other at the rate', () => {
    const link = new LinkDirection(model);
    const at = [0, 0, 0].map(() => link.send(0, 1e6));
    expect(at).toEqual([25, 35, 45]);
    // Handed over while the link is still busy (until 30 ms): starts at 30, not at 20.
    expect(link.send(20, 1e6)).toBe(30 + 10 + 15);
  });

  it('never delivers before the model allows, never out of order, and keeps the rate over any sequence', () => {
    fc.assert(
      fc.property(
        fc.record({
          latencyMs: fc.integer({ min: 0, max: 200 }),
          bytesPerSecond: fc.integer({ min: 1_000, max: 1e9 }),
        }),
        fc.array(
          fc.record({ gap: fc.double({ min: 0, max: 50, noNaN: true }), bytes: fc.integer({ min: 0, max: 1e7 }) }),
          { minLength: 1, maxLength: 50 },
        ),
        (m, chunks) => {
          const link = new LinkDirection(m);
          let now = 0;
          let last = -Infinity;
          let bytes = 0;
          for (const c of chunks) {
            now += c.gap;
            bytes += c.bytes;
            const at = link.send(now, c.bytes);
            expect(at).toBeGreaterThanOrEqual(now + transferMs(m, c.bytes) + m.latencyMs / 2 - 1e-6);
            expect(at).toBeGreaterThanOrEqual(last);
            // Everything handed over so far is through no earlier than its bytes at the rate allow.
            expect(at).toBeGreaterThanOrEqual(chunks[0]!.gap + transferMs(m, bytes) + m.latencyMs / 2 - 1e-6);
            last = at;
          }
        },
      ),
    );
  });

  it('refuses a model it cannot apply', () => {
    expect(() => validateLinkModel({ latencyMs: -1, bytesPerSecond: 1 })).toThrow(LinkModelError);
    expect(() => validateLinkModel({ latencyMs: 1, bytesPerSecond: 0 })).toThrow(/bytesPerSecond/);
    expect(() => new LinkDirection({ latencyMs: Number.NaN, bytesPerSecond: 1 })).toThrow(/latencyMs/);
  });
});
