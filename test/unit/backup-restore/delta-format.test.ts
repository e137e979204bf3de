import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  decodeDelta,
  DELTA_FORMAT,
  DeltaFormatError,
  encodeDelta,
  groupByRevision,
  type DeltaEvent,
} from '../../../seed/backup-restore/index.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const events: DeltaEvent[] = [
  { type: 'put', key: b64('a'), value: b64('1'), revision: 11 },
  { type: 'put', key: b64('b'), value: b64('2'), revision: 12 },
  { type: 'delete', key: b64('a'), revision: 12 },
  { type: 'put', key: b64('c'), value: '', revision: 13 },
];

describe('delta format', () => {
  it.each([true, false])('round-trips events with gzip=%s', (gzip) => {
    // Act
    const bytes = encodeDelta({ startRevision: 11, lastRevision: 13, events, gzip });
    const decoded = decodeDelta(bytes, 'k');

    // Assess
    expect(decoded.header).toEqual({ format: DELTA_FORMAT, startRevision: 11, lastRevision: 13, events: 4 });
    expect(decoded.events).toEqual(events);
    expect(bytes[0] === 0x1f && bytes[1] === 0x8b).toBe(gzip);
  });

  it.each([
    ['not gzip nor JSON', Buffer.from([0x1f, 0x8b, 1, 2, 3])],
    ['not JSON lines', Buffer.from('{"format":')],
    ['another format', Buffer.from('{"format":"etcdbr","startRevision":1,"lastRevision":2,"events":0}\n')],
    [
      'truncated',
      Buffer.from(
        `${JSON.stringify({ format: DELTA_FORMAT, startRevision: 1, lastRevision: 2, events: 2 })}\n${JSON.stringify(events[0])}\n`,
      ),
    ],
    [
      'out of order',
      gzipSync(
        Buffer.from(
          [{ format: DELTA_FORMAT, startRevision: 11, lastRevision: 13, events: 2 }, events[1], events[0]]
            .map((l) => JSON.stringify(l))
            .join('\n'),
        ),
      ),
    ],
    [
      'outside its range',
      Buffer.from(
        [{ format: DELTA_FORMAT, startRevision: 12, lastRevision: 13, events: 1 }, events[0]]
          .map((l) => JSON.stringify(l))
          .join('\n'),
      ),
    ],
    [
      'a malformed event',
      Buffer.from(
        [
          { format: DELTA_FORMAT, startRevision: 11, lastRevision: 13, events: 1 },
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
