import { describe, expect, it } from 'vitest';
import { conditionTrue, mergeConditions } from '../../../core/garden/conditions.js';
import type { Condition } from '../../../core/model/common.js';

const EARLIER = '2025-01-01T00:00:00.000Z';
const NOW = '2025-01-01T00:05:00.000Z';

describe('mergeConditions', () => {
  it.each<[string, Condition[], Condition[], Condition[]]>([
    [
      'keeps lastTransitionTime while the status stays the same',
      [{ type: 'Ready', status: 'True', lastTransitionTime: EARLIER, lastUpdateTime: EARLIER }],
      [{ type: 'Ready', status: 'True', reason: 'Healthy' }],
      [{ type: 'Ready', status: 'True', reason: 'Healthy', lastTransitionTime: EARLIER, lastUpdateTime: NOW }],
    ],
    [
      'sets lastTransitionTime to now when the status changes',
      [{ type: 'Ready', status: 'True', lastTransitionTime: EARLIER, lastUpdateTime: EARLIER }],
      [{ type: 'Ready', status: 'False', reason: 'EtcdDown' }],
      [{ type: 'Ready', status: 'False', reason: 'EtcdDown', lastTransitionTime: NOW, lastUpdateTime: NOW }],
    ],
    [
      'stamps a new condition with now',
      [],
      [{ type: 'Ready', status: 'Unknown' }],
      [{ type: 'Ready', status: 'Unknown', lastTransitionTime: NOW, lastUpdateTime: NOW }],
    ],
    [
      'ignores a transition time the reporter sends: the server keeps it',
      [{ type: 'Ready', status: 'True', lastTransitionTime: EARLIER }],
      [{ type: 'Ready', status: 'True', lastTransitionTime: '2020-01-01T00:00:00.000Z' }],
      [{ type: 'Ready', status: 'True', lastTransitionTime: EARLIER, lastUpdateTime: NOW }],
    ],
    [
      'gives a kept condition without a transition time now',
      [{ type: 'Ready', status: 'True' }],
      [{ type: 'Ready', status: 'True' }],
      [{ type: 'Ready', status: 'True', lastTransitionTime: NOW, lastUpdateTime: NOW }],
    ],
    [
      'keeps conditions that were not reported and sorts by type',
      [{ type: 'Zeta', status: 'True', lastTransitionTime: EARLIER, lastUpdateTime: EARLIER }],
      [{ type: 'Alpha', status: 'False' }],
      [
        { type: 'Alpha', status: 'False', lastTransitionTime: NOW, lastUpdateTime: NOW },
        { type: 'Zeta', status: 'True', lastTransitionTime: EARLIER, lastUpdateTime: EARLIER },
      ],
    ],
  ])('%s', (_name, current, reported, expected) => {
    // Act
    const merged = mergeConditions(current, reported, NOW);
    // Assess
    expect(merged).toEqual(expected);
  });

  it('does not change the current conditions', () => {
    const current: Condition[] = [{ type: 'Ready', status: 'True', lastTransitionTime: EARLIER }];
    mergeConditions(current, [{ type: 'Ready', status: 'False' }], NOW);
    expect(current).toEqual([{ type: 'Ready', status: 'True', lastTransitionTime: EARLIER }]);
  });
});

describe('conditionTrue', () => {
  it.each<[Condition[] | undefined, boolean]>([
    [undefined, false],
    [[], false],
    [[{ type: 'Ready', status: 'True' }], true],
    [[{ type: 'Ready', status: 'False' }], false],
    [[{ type: 'Other', status: 'True' }], false],
  ])('Ready in %j is %s', (conditions, expected) => {
    expect(conditionTrue(conditions, 'Ready')).toBe(expected);
  });
});
