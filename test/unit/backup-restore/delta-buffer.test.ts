import { describe, expect, it } from 'vitest';
import { DeltaBuffer, type DeltaEvent } from '../../../seed/backup-restore/index.js';

const put = (revision: number): DeltaEvent => ({
  type: 'put',
  key: Buffer.from(`k${revision}`).toString('base64'),
  value: '',
  revision,
});

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

  it("knows when the oldest event not yet uploaded arrived: the write guard's backup lag", () => {
    const buffer = new DeltaBuffer(10);
    expect(buffer.oldestPendingAt).toBeUndefined();
    buffer.add([put(11), put(12)], 1_000);
    buffer.add([put(13)], 1_400);
    expect(buffer.oldestPendingAt).toBe(1_000);
    // A failed upload moves nothing; an uploaded delta up to 12 leaves 13, which arrived later.
    buffer.cut();
    expect(buffer.oldestPendingAt).toBe(1_000);
    buffer.snapshotted(12);
    expect(buffer.oldestPendingAt).toBe(1_400);
    buffer.snapshotted(13);
    expect(buffer.oldestPendingAt).toBeUndefined();
    expect(buffer.carry()).toBeUndefined();
  });

  it('carries the age of dropped events across a stop: the watch delivers them again, later', () => {
    const before = new DeltaBuffer(10);
    before.add([put(11), put(12)], 1_000);
    const carried = before.carry();
    expect(carried).toEqual({ since: 1_000, upTo: 12 });

    const after = new DeltaBuffer(before.lastRevision, carried);
    expect(after.oldestPendingAt).toBe(1_000);
    after.add([put(11), put(12), put(13)], 5_000);
    expect(after.oldestPendingAt).toBe(1_000);
    // A delta up to 11 does not hold 12 yet; one up to 12 holds every dropped event.
    after.snapshotted(11);
    expect(after.oldestPendingAt).toBe(1_000);
    after.snapshotted(12);
    expect(after.oldestPendingAt).toBe(5_000);
  });
});
