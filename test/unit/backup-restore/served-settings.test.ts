import { describe, expect, it } from 'vitest';
import { DnsOwnerLookup } from '../../../adapters/dns/owner-lookup.js';
import { DEFAULT_OWNER_CHECK_INTERVAL_MS, DEFAULT_UNKNOWN_GRACE_MS } from '../../../core/ownership/index.js';
import type { ServeFlags } from '../../../seed/backup-restore/serve-flags.js';
import { servedSettings } from '../../../seed/backup-restore/served-settings.js';
import { DEFAULT_DELTA_SNAPSHOT_INTERVAL_MS } from '../../../seed/backup-restore/snapshotter.js';

const flags = (more: Partial<ServeFlags> = {}): ServeFlags => ({
  technicalID: 'shoot--dev--api1',
  ownerRecord: 'owner.api1.dev.internal.example',
  identity: 'seed-a',
  bucket: 'gl-backup-a',
  owner: { mode: 'dns' },
  dataDir: '/var/etcd/data',
  ...more,
});

describe('what a sidecar runs with, from its flags', () => {
  it("takes the sidecar's defaults for what the flags leave out", () => {
    const settings = servedSettings(flags());

    expect(settings).toMatchObject({
      ownerCheckInterval: DEFAULT_OWNER_CHECK_INTERVAL_MS,
      // A lookup may take as long as one check interval.
      checkTimeout: DEFAULT_OWNER_CHECK_INTERVAL_MS,
      unknownGrace: DEFAULT_UNKNOWN_GRACE_MS,
      deltaSnapshotInterval: DEFAULT_DELTA_SNAPSHOT_INTERVAL_MS,
    });
    expect(settings.backupLagLimit).toBeGreaterThan(DEFAULT_DELTA_SNAPSHOT_INTERVAL_MS);
  });

  it.each([
    ['the default interval', undefined],
    ['a given interval', 2_000],
  ])("in DNS mode, may act on an answer as old as the DNS lookup's staleness (%s)", (_, ownerCheckInterval) => {
    const given = ownerCheckInterval === undefined ? {} : { ownerCheckInterval };

    const settings = servedSettings(flags(given));

    expect(settings.dnsCacheTTL).toBe(new DnsOwnerLookup(given).staleness);
  });

  it('in API mode acts on the record as it stands, and keeps every timing it was given', () => {
    const settings = servedSettings(
      flags({
        owner: { mode: 'api', hostedZoneId: 'Z1' },
        ownerCheckInterval: 500,
        unknownGrace: 3_000,
        checkTimeout: 400,
        deltaSnapshotInterval: 1_000,
        backupLagLimit: 2_500,
      }),
    );

    expect(settings).toEqual({
      ownerCheckInterval: 500,
      checkTimeout: 400,
      unknownGrace: 3_000,
      dnsCacheTTL: 0,
      deltaSnapshotInterval: 1_000,
      backupLagLimit: 2_500,
    });
  });
});
