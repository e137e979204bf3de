import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  decodeDelta,
  DELTA_FORMAT,
  DELTA_FORMAT_V1,
  DeltaFormatError,
  encodeDelta,
  groupByRevision,
  type DeltaEvent,
} from '../../../seed/backup-restore/index.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const events: DeltaEvent[] = [
  { type: 'put', key: b64('a'), value: b64('1'), revision: 11, lease: '7587899193907348535' },
  { type: 'put', key: b64('b'), value: b64('2'), revision: 12 },
  { type: 'delete', key: b64('a'), revision: 12 },
  { type: 'put', key: b64('c'), value: '', revision: 13 },
];

const leases = [
  { id: '4660', ttl: 1800 },
  { id: '7587899193907348535', ttl: 3600 },
];
const digest = 'ab'.repeat(32);
const v1 = (header: object, lines: object[]) =>
  Buffer.from([{ format: DELTA_FORMAT_V1, ...header }, ...lines].map((l) => JSON.stringify(l)).join('\n'));
const v2 = (header: object, lines: object[]) =>
  Buffer.from([{ format: DELTA_FORMAT, leases: [], ...header }, ...lines].map((l) => JSON.stringify(l)).join('\n'));

describe('delta format', () => {
  it.each([true, false])('round-trips events, their leases, the lease table and the digest with gzip=%s', (gzip) => {
    // Act
    const bytes = encodeDelta({ startRevision: 11, lastRevision: 13, events, leases, digest, gzip });
    const decoded = decodeDelta(bytes, 'k');

    // Assess
    expect(decoded.header).toEqual({
      format: DELTA_FORMAT,
      startRevision: 11,
      lastRevision: 13,
      events: 4,
      leases,
      digest,
    });
    expect(decoded.events).toEqual(events);
    expect(bytes[0] === 0x1f && bytes[1] === 0x8b).toBe(gzip);
  });

  it('writes no digest where the source did not know it, and an empty table where no lease lives', () => {
    const decoded = decodeDelta(
      encodeDelta({ startRevision: 2, lastRevision: 2, events: [], leases: [], gzip: false }),
      'k',
    );

    expect(decoded.header).toEqual({ format: DELTA_FORMAT, startRevision: 2, lastRevision: 2, events: 0, leases: [] });
  });

  it('still reads version 1 (no leases, no digest): every delta in a bucket stays restorable', () => {
    // Prepare: a delta as the sidecar wrote it before version 2.
    const old = events.map(({ lease: _lease, ...e }) => e);
    const bytes = gzipSync(v1({ startRevision: 11, lastRevision: 13, events: 4 }, old));

    // Act
    const decoded = decodeDelta(bytes, 'shoot/v2/Incr-11-13');

    // Assess: the lease table is unknown (not empty), and there is no digest to check.
    expect(decoded.header).toEqual({ format: DELTA_FORMAT_V1, startRevision: 11, lastRevision: 13, events: 4 });
    expect(decoded.header.leases).toBeUndefined();
    expect(decoded.events).toEqual(old);
  });

  it.each([
    ['not gzip nor JSON', Buffer.from([0x1f, 0x8b, 1, 2, 3])],
    ['not JSON lines', Buffer.from('{"format":')],
    ['another format', Buffer.from('{"format":"etcdbr","startRevision":1,"lastRevision":2,"events":0}\n')],
    ['version 2 without a lease table', v2({ startRevision: 1, lastRevision: 2, events: 0, leases: undefined }, [])],
    ['a lease of TTL 0', v2({ startRevision: 1, lastRevision: 2, events: 0, leases: [{ id: '5', ttl: 0 }] }, [])],
    ['a lease ID 0', v2({ startRevision: 1, lastRevision: 2, events: 0, leases: [{ id: '0', ttl: 5 }] }, [])],
    [
      'a lease ID beyond int64',
      v2({ startRevision: 1, lastRevision: 2, events: 0, leases: [{ id: '9223372036854775808', ttl: 5 }] }, []),
    ],
    ['a malformed digest', v2({ startRevision: 1, lastRevision: 2, events: 0, digest: 'xyz' }, [])],
    [
      'a put with a malformed lease',
      v2({ startRevision: 11, lastRevision: 11, events: 1 }, [{ ...events[0], lease: 'abc' }]),
    ],
    ['version 1 with a lease', v1({ startRevision: 11, lastRevision: 11, events: 1 }, [events[0]!])],
    [
      'truncated',
      Buffer.from(
        `${JSON.stringify({ format: DELTA_FORMAT, startRevision: 1, lastRevision: 2, events: 2, leases: [] })}\n${JSON.stringify(events[0])}\n`,
      ),
    ],
    [
      'out of order',
      gzipSync(
        Buffer.from(
          [{ format: DELTA_FORMAT, startRevision: 11, lastRevision: 13, events: 2, leases: [] }, events[1], events[0]]
            .map((l) => JSON.stringify(l))
            .join('\n'),
        ),
      ),
    ],
    [
      'outside its range',
      Buffer.from(
        [{ format: DELTA_FORMAT, startRevision: 12, lastRevision: 13, events: 1, leases: [] }, events[0]]
          .map((l) => JSON.stringify(l))
          .join('\n'),
      ),
    ],
    [
      'a malformed event',
      Buffer.from(
        [
          { format: DELTA_FORMAT, startRevision: 11, lastRevision: 13, events: 1, leases: [] },
          { type: 'patch', key: 'a', revision: 11 },
        ]
          .map((l) => JSON.stringify(l))
          .join('\n'),
      ),
    ],
  ])('rejects a delta that is %s', (_case, bytes) => {
    expect(() => decodeDelta(bytes, 'shoot/v2/Incr-1')).toThrow(DeltaFormatError);
  });

  it('groups the events of one transaction into one revision', () => {
    expect(groupByRevision(events).map((g) => [g.revision, g.events.length])).toEqual([
      [11, 1],
      [12, 2],
      [13, 1],
    ]);
    expect(groupByRevision([])).toEqual([]);
  });
});
