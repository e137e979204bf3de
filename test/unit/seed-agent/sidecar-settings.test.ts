import { describe, expect, it } from 'vitest';
import type { SidecarStatus } from '../../../seed/backup-restore/sidecar.js';
import { reportedSettings } from '../../../seed/agent/sidecar-settings.js';

const SETTINGS = {
  ownerCheckInterval: 500,
  checkTimeout: 500,
  unknownGrace: 5_000,
  dnsCacheTTL: 0,
  deltaSnapshotInterval: 1_000,
  backupLagLimit: 2_000,
};
const status = (settings: unknown) => ({ settings }) as unknown as SidecarStatus;

describe('reportedSettings: what the agent reports of a shoot’s sidecars', () => {
  it.each([
    ['one sidecar', [status(SETTINGS)], SETTINGS],
    [
      "a cluster's members: each field's largest value",
      [status(SETTINGS), status({ ...SETTINGS, unknownGrace: 6_000 }), status({ ...SETTINGS, backupLagLimit: 3_000 })],
      { ...SETTINGS, unknownGrace: 6_000, backupLagLimit: 3_000 },
    ],
    ['a member that does not answer: nothing', [status(SETTINGS), undefined], undefined],
    ['a sidecar older than the report: nothing', [status(undefined)], undefined],
    ['a torn answer (a fraction of a millisecond): nothing', [status({ ...SETTINGS, checkTimeout: 0.5 })], undefined],
    ['no sidecar: nothing', [], undefined],
  ])('%s', (_case, statuses, expected) => {
    expect(reportedSettings(statuses)).toEqual(expected);
  });
});
