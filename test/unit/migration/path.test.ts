import { describe, expect, it } from 'vitest';
import { choosePath } from '../../../core/migration/index.js';

const interval = 10_000;

describe('choosePath', () => {
  it.each([
    ['auto, fresh heartbeat', 'auto', 1_000, 'good'],
    ['auto, just under 3 intervals', 'auto', 29_999, 'good'],
    ['auto, exactly 3 intervals', 'auto', 30_000, 'bad'],
    ['auto, stale heartbeat', 'auto', 120_000, 'bad'],
    ['auto, never a heartbeat', 'auto', undefined, 'bad'],
    ['good forced with a stale source', 'good', 999_999, 'good'],
    ['bad forced with a fresh source', 'bad', 0, 'bad'],
    ['live with a fresh source', 'live', 1_000, 'live'],
    // Its survey only reads the source's etcd; where that does not answer, the migration goes on as the good path.
    ['live forced with a stale source', 'live', 999_999, 'live'],
  ] as const)('%s -> %s', (_name, mode, sourceHeartbeatAge, path) => {
    // Act
    const decision = choosePath({ mode, sourceHeartbeatAge, heartbeatInterval: interval });

    // Assess
    expect(decision.path).toBe(path);
    expect(decision.reason.length).toBeGreaterThan(0);
  });

  it('explains an auto decision with the age and the limit', () => {
    expect(choosePath({ mode: 'auto', sourceHeartbeatAge: 45_000, heartbeatInterval: interval }).reason).toBe(
      "the source's last heartbeat is 45 s old, not younger than 3 intervals (30 s)",
    );
  });

  it('refuses a heartbeat interval that is not positive', () => {
    expect(() => choosePath({ mode: 'auto', sourceHeartbeatAge: 1, heartbeatInterval: 0 })).toThrow(RangeError);
  });
});
