import { describe, expect, it } from 'vitest';
import { parseCommand } from '../../../core/commands/index.js';
import { commandBytes, commandForStep, MAX_COMMAND_BYTES, MIGRATION_STEPS } from '../../../core/migration/index.js';
import { collectShootState, InMemoryBlobStore, packShootState } from '../../../core/shootstate/index.js';
import type { MigrationRecord } from '../../../core/migration/index.js';
import { aRecord, NOW } from './builders.js';

describe('commandForStep', () => {
  describe('on the live path', () => {
    const record = { ...aRecord({ mode: 'live' }), path: 'live' as const };
    const spec = {
      cluster: 'cdf818194e3a8c32',
      sourceMembers: [{ name: 'etcd', peerUrl: 'http://10.0.0.1:2380', clientUrl: 'http://10.0.0.1:2381' }],
    };
    // The destination's load balancer is kept beside what the walk is of: the garden's, never sent back.
    const live = { ...spec, loadBalancer: 'https://127.0.0.2:8443' };
    const round = (step: 'survey-live' | 'walk-live' | 'finish-live', r: MigrationRecord = { ...record, live }) =>
      parseCommand(
        commandForStep({
          record: r,
          step,
          now: NOW,
          stateBucket: 'gl-state',
          sourceEtcdUrls: ['http://10.0.0.1:2379'],
        }),
      );

    it.each([
      ['survey-live', 'source-identity', undefined, ['http://10.0.0.1:2379']],
      ['walk-live', 'source-identity+destination-identity@cdf818194e3a8c32', spec, ['http://10.0.0.1:2381']],
      ['finish-live', 'destination-identity', spec, ['http://10.0.0.1:2381']],
    ] as const)('%s tells the destination what the owner record holds then: %s', (step, owner, carried, urls) => {
      // Act
      const command = step === 'survey-live' ? round(step, record) : round(step);

      // Assess: the survey reads the source where its heartbeat says it serves; later rounds use the survey's answer.
      expect(command).toMatchObject({
        type: 'live-walk',
        seed: 'destination',
        commandId: `mig-1/${step}`,
        owner,
        source: { identity: 'source-identity', clientUrls: urls },
        destination: { identity: 'destination-identity' },
        backup: { bucket: 'gl-backup-destination' },
      });
      expect((command as { spec?: unknown }).spec).toEqual(carried);
    });

    it("refuses a later round without the survey's answer, and retires the source with a delete", () => {
      expect(() => round('walk-live', record)).toThrow(/survey/);
      expect(commandForStep({ record, step: 'retire-source', now: NOW, stateBucket: 'gl-state' })).toMatchObject({
        type: 'delete-control-plane',
        seed: 'source',
        keepBackups: true,
        keepExternalResources: true,
      });
    });
  });

  it.each([
    ['migrate-extensions', 'migrate', 'source'],
    ['delete-source-control-plane', 'delete-control-plane', 'source'],
    ['restore-etcd-ahead', 'restore', 'destination'],
    ['restore-etcd', 'restore', 'destination'],
    ['restore-extensions', 'restore', 'destination'],
  ] as const)(
    '%s sends a valid %s command to the %s seed, with the same id on every retry',
    async (step, type, seed) => {
      // Prepare
      const record = aRecord({ hibernated: true });
      const state = await packShootState({
        state: collectShootState({ shoot: record.shoot, resources: [], now: NOW }),
        blobs: new InMemoryBlobStore(),
      });

      // Act
      const command = commandForStep({
        record,
        step,
        now: NOW,
        stateBucket: 'gl-state',
        taskToken: 'token',
        heartbeatSeconds: 10,
        timeoutSeconds: 60,
        shootState: { state, version: 4 },
        etcd: { final: true, expectedLastRevision: 42 },
      });
      const again = commandForStep({
        record,
        step,
        now: new Date(NOW.getTime() + 5_000),
        stateBucket: 'gl-state',
        shootState: { state, version: 4 },
        etcd: { final: true },
      });

      // Assess
      expect(parseCommand(JSON.stringify(command))).toEqual(command);
      expect(command).toMatchObject({
        type,
        seed: record[seed].name,
        commandId: `mig-1/${step}`,
        migrationId: 'mig-1',
        shoot: record.shoot,
      });
      expect(again.commandId).toBe(command.commandId);
      if (command.type === 'restore') expect(command.hibernated).toBe(true);
      expect(commandBytes(command)).toBeLessThan(MAX_COMMAND_BYTES);
    },
  );

  it.each(MIGRATION_STEPS.filter((s) => s.command === undefined).map((s) => s.id))(
    'refuses %s, which the garden does itself',
    (step) => {
      expect(() => commandForStep({ record: aRecord(), step, now: NOW, stateBucket: 'gl-state' })).toThrow(RangeError);
    },
  );

  it.each(['node', 'zone'] as const)(
    'restores the etcd of a %s shoot as the cluster it was: the command carries its failure tolerance and the destination bucket',
    (failureTolerance) => {
      const command = commandForStep({
        record: aRecord({ failureTolerance }),
        step: 'restore-etcd',
        now: NOW,
        stateBucket: 'gl-state',
        etcd: { final: true },
      });
      expect(command).toMatchObject({
        type: 'restore',
        controlPlane: { failureTolerance, hibernated: false, backup: { bucket: 'gl-backup-destination' } },
        etcd: { bucket: 'gl-backup-destination' },
      });
    },
  );

  it('restores the etcd of a shoot without failure tolerance as one etcd: no control plane spec', () => {
    const command = commandForStep({
      record: aRecord(),
      step: 'restore-etcd',
      now: NOW,
      stateBucket: 'gl-state',
      etcd: { final: true },
    });
    expect(command.type === 'restore' && command.controlPlane).toBeUndefined();
  });

  it('restores ahead from what the destination bucket holds now: no revision to expect, not final, whatever the copy said', () => {
    // Act
    const ahead = commandForStep({
      record: aRecord(),
      step: 'restore-etcd-ahead',
      now: NOW,
      stateBucket: 'gl-state',
      etcd: { final: true, expectedLastRevision: 42 },
    });
    const ha = commandForStep({
      record: aRecord({ failureTolerance: 'zone' }),
      step: 'restore-etcd-ahead',
      now: NOW,
      stateBucket: 'gl-state',
    });
    const normal = commandForStep({
      record: aRecord(),
      step: 'restore-etcd',
      now: NOW,
      stateBucket: 'gl-state',
      etcd: { final: true, expectedLastRevision: 42 },
    });

    // Assess
    expect(ahead).toMatchObject({
      type: 'restore',
      seed: 'destination',
      commandId: 'mig-1/restore-etcd-ahead',
      hibernated: false,
      etcd: { bucket: 'gl-backup-destination', final: false, ahead: true },
    });
    expect(ahead.type === 'restore' && ahead.etcd).toEqual({
      bucket: 'gl-backup-destination',
      final: false,
      ahead: true,
    });
    expect(ahead.type === 'restore' && ahead.extensions).toBeUndefined();
    // An HA shoot's destination learns what it would restore, to decline a restore ahead it does not do.
    expect(ha).toMatchObject({ controlPlane: { failureTolerance: 'zone' }, etcd: { ahead: true } });
    expect(normal.type === 'restore' && normal.etcd).toEqual({
      bucket: 'gl-backup-destination',
      final: true,
      expectedLastRevision: 42,
    });
  });

  it('a restore of extensions needs the ShootState', () => {
    expect(() =>
      commandForStep({ record: aRecord(), step: 'restore-extensions', now: NOW, stateBucket: 'gl-state' }),
    ).toThrow(/needs the ShootState/);
  });
});
