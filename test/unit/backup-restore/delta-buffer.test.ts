import { describe, expect, it } from 'vitest';
import { DeltaBuffer, type DeltaEvent } from '../../../seed/backup-restore/index.js';

const put = (revision: number): DeltaEvent => ({ type: 'put', key: Buffer.from(`k${revision}`).toString('base64'), value: '', revision });

describe('DeltaBuffer', () => {
  it('cuts the events after the baseline as the next delta, and moves the baseline once it is uploaded', () => {
    // Prepare
    const buffer = new DeltaBuffer(10);
    buffer.add([put(9), put(10), put(11), put(12)]);

    // Act
    const cut = buffer.cut();
    buffer.add([put(13)]);
    buffer.snapshotted(12);

    // Assess: events at or below the baseline were never kept; the uploaded ones are gone, the later one stays.
    expect(cut).toEqual({ kind: 'delta', delta: { startRevision: 11, lastRevision: 12, events: [put(11), put(12)] } });
    expect(buffer.lastRevision).toBe(12);
    expect(buffer.cut()).toEqual({ kind: 'delta', delta: { startRevision: 13, lastRevision: 13, events: [put(13)] } });
  });

  it('keeps the events when the upload failed, so the next delta holds more', () => {
    const buffer = new DeltaBuffer(1);
    buffer.add([put(2)]);
    buffer.cut();
    buffer.add([put(3)]);
    expect(buffer.cut()).toMatchObject({ kind: 'delta', delta: { startRevision: 2, lastRevision: 3 } });
  });

  it('drops what a full snapshot covers, even events that arrive after it', () => {
    const buffer = new DeltaBuffer(5);
    buffer.add([put(6), put(7)]);
    buffer.snapshotted(8);
    buffer.add([put(8), put(9)]);
    expect(buffer.cut()).toEqual({ kind: 'delta', delta: { startRevision: 9, lastRevision: 9, events: [put(9)] } });
    buffer.snapshotted(3);
    expect(buffer.lastRevision).toBe(8);
  });

  it.each([
    ['nothing arrived', [], { kind: 'empty' }],
    ['the watch skipped revisions', [put(14)], { kind: 'gap', expected: 11, found: 14 }],
  ])('reports %s', (_case, events, expected) => {
    const buffer = new DeltaBuffer(10);
    buffer.add(events);
    expect(buffer.cut()).toEqual(expected);
  });
});
