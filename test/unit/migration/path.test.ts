import { describe, expect, it } from 'vitest';
import { choosePath, choosePathForSeeds, liveWalkObstacle } from '../../../core/migration/index.js';
import type { Seed, SeedCapability } from '../../../core/model/seed.js';

const interval = 10_000;

describe('choosePath', () => {
  it.each([
    ['auto, fresh heartbeat, the walk possible', 'auto', 1_000, undefined, 'live'],
    ['auto, fresh heartbeat, the walk not possible', 'auto', 1_000, 'it is hibernated', 'good'],
    ['auto, just under 3 intervals', 'auto', 29_999, undefined, 'live'],
    ['auto, just under 3 intervals, no walk', 'auto', 29_999, 'no', 'good'],
    ['auto, exactly 3 intervals', 'auto', 30_000, undefined, 'bad'],
    ['auto, stale heartbeat', 'auto', 120_000, undefined, 'bad'],
    ['auto, never a heartbeat', 'auto', undefined, undefined, 'bad'],
    ['good forced with a stale source', 'good', 999_999, undefined, 'good'],
    ['good forced where the walk is possible', 'good', 0, undefined, 'good'],
    ['bad forced with a fresh source', 'bad', 0, undefined, 'bad'],
    ['live with a fresh source', 'live', 1_000, undefined, 'live'],
    // Requested, the obstacle is the survey's to find: a seed that cannot join answers LiveWalkUnsupported.
    ['live with a fresh source where auto would not walk', 'live', 1_000, 'no', 'live'],
    // Its survey only reads the source's etcd; where that does not answer, the migration goes on as the good path.
    ['live forced with a stale source', 'live', 999_999, undefined, 'live'],
  ] as const)('%s -> %s', (_name, mode, sourceHeartbeatAge, liveObstacle, path) => {
    // Act
    const decision = choosePath({ mode, sourceHeartbeatAge, heartbeatInterval: interval, liveObstacle });

    // Assess
    expect(decision.path).toBe(path);
    expect(decision.reason.length).toBeGreaterThan(0);
  });

  it('explains an auto decision with the age and the limit, and what stands in the walk', () => {
    const at = (sourceHeartbeatAge: number, liveObstacle?: string) =>
      choosePath({ mode: 'auto', sourceHeartbeatAge, heartbeatInterval: interval, liveObstacle }).reason;
    expect(at(45_000)).toBe("the source's last heartbeat is 45 s old, not younger than 3 intervals (30 s)");
    expect(at(2_000)).toBe(
      "the source's last heartbeat is 2 s old, younger than 3 intervals (30 s), and both seeds walk etcd live",
    );
    expect(at(2_000, 'it is hibernated: no etcd runs to walk')).toBe(
      "the source's last heartbeat is 2 s old, younger than 3 intervals (30 s); not live: it is hibernated: no etcd runs to walk",
    );
  });

  it('refuses a heartbeat interval that is not positive', () => {
    expect(() =>
      choosePath({ mode: 'auto', sourceHeartbeatAge: 1, heartbeatInterval: 0, liveObstacle: undefined }),
    ).toThrow(RangeError);
  });
});

const seed = (name: string, capabilities?: SeedCapability[], heartbeatAt = '2026-12-03T10:00:00.000Z'): Seed =>
  ({
    apiVersion: 'core.gardenless.io/v1',
    kind: 'Seed',
    metadata: { name },
    spec: {},
    status: {
      identity: `${name}-id`,
      conditions: [],
      shoots: 0,
      labels: {},
      lastHeartbeatTime: heartbeatAt,
      ...(capabilities ? { capabilities } : {}),
    },
  }) as unknown as Seed;

describe('liveWalkObstacle', () => {
  const running = { hibernated: false };
  it.each([
    ['both seeds walk', running, ['live-walk'], ['live-walk'], undefined],
    ['hibernated', { hibernated: true }, ['live-walk'], ['live-walk'], 'it is hibernated: no etcd runs to walk'],
    [
      'highly available',
      { hibernated: false, failureTolerance: 'zone' },
      ['live-walk'],
      ['live-walk'],
      'its control plane is highly available (zone): a walk of a three-member etcd is not offered yet',
    ],
    ['the source reports nothing', running, undefined, ['live-walk'], 'the source seed a does not report live-walk'],
    ['the destination reports none', running, ['live-walk'], [], 'the destination seed b does not report live-walk'],
  ] as const)('%s', (_name, guards, source, destination, obstacle) => {
    expect(
      liveWalkObstacle({
        guards,
        source: seed('a', source && [...source]),
        destination: seed('b', destination && [...destination]),
      }),
    ).toBe(obstacle);
  });

  it('names a destination that is not there', () => {
    expect(liveWalkObstacle({ guards: running, source: seed('a', ['live-walk']), destination: undefined })).toBe(
      'the destination seed (not found) does not report live-walk',
    );
  });
});

describe('choosePathForSeeds', () => {
  const now = new Date('2026-12-03T10:00:05.000Z');
  const choose = (source: Seed | undefined, destination: Seed | undefined, hibernated = false) =>
    choosePathForSeeds({ mode: 'auto', guards: { hibernated }, source, destination, now, heartbeatInterval: interval });

  it('walks live between two seeds that report live-walk while the source is heard from', () => {
    expect(choose(seed('a', ['live-walk']), seed('b', ['live-walk'])).path).toBe('live');
  });

  it('takes the good path when either seed cannot walk, or the shoot is hibernated', () => {
    expect(choose(seed('a', ['live-walk']), seed('b')).path).toBe('good');
    expect(choose(seed('a'), seed('b', ['live-walk'])).path).toBe('good');
    expect(choose(seed('a', ['live-walk']), seed('b', ['live-walk']), true).path).toBe('good');
  });

  it('takes the bad path when the source is not heard from, whatever it can do', () => {
    expect(choose(seed('a', ['live-walk'], '2026-12-03T09:59:00.000Z'), seed('b', ['live-walk'])).path).toBe('bad');
    expect(choose(undefined, seed('b', ['live-walk'])).path).toBe('bad');
  });
});
