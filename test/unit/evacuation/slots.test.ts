import { describe, expect, it } from 'vitest';
import { slotFreedAt } from '../../../core/evacuation/slots.js';
import type { MigrationStepStatus, StepState } from '../../../core/migration/record.js';

const AT = '2026-03-01T12:00:00.000Z';
const steps = (ahead: StepState, owner: StepState): MigrationStepStatus[] => [
  { id: 'restore-etcd-ahead', title: 'restore etcd ahead', state: ahead, attempts: 1 },
  {
    id: 'set-owner-destination',
    title: 'set owner',
    state: owner,
    attempts: 1,
    ...(owner === 'succeeded' ? { endedAt: AT } : {}),
  },
];

describe('slotFreedAt: what an evacuation place holds', () => {
  it.each([
    ['restored ahead, owner record moved: only the wait and a catch-up are left', 'succeeded', 'succeeded', AT],
    ['restored ahead, owner record not moved yet', 'succeeded', 'running', undefined],
    ['restoring ahead', 'running', 'pending', undefined],
    ['no restore ahead (an HA cluster): it restores after the wait', 'skipped', 'succeeded', undefined],
    ['the restore ahead failed: it restores after the wait', 'failed', 'succeeded', undefined],
  ] as const)('%s', (_case, ahead, owner, expected) => {
    expect(slotFreedAt({ steps: steps(ahead, owner) })).toBe(expected);
  });
});
