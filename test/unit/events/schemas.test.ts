import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEPENDENTS_RESTARTED, DEPENDENTS_SCALED_DOWN, DEPENDENTS_SCALED_UP } from '../../../core/dwd/events.js';
import { buildEvent, EVENT_TYPES, InvalidEventError } from '../../../core/events/schemas.js';
import type { EventSink } from '../../../core/garden/context.js';
import { ShootOperationSteps } from '../../../core/garden/operation-steps.js';
import { InMemoryOwnerRecords } from '../../../core/ownership/memory-owner-records.js';
import { commandSuccess } from '../../../core/commands/protocol.js';
import { MemoryGardenRepository } from '../../../core/garden/memory-repository.js';
import { GardenService } from '../../../core/garden/service.js';
import { SPLIT_BRAIN_EVENT } from '../../../core/ownership/audit.js';
import { EVENTS_DIR, renderEventSchemas } from '../../../scripts/events.js';
import { seedBody, shootBody } from '../garden/builders.js';

describe('bus events', () => {
  it('are documented in docs/events exactly as the zod schemas generate them (npm run events)', () => {
    const files = renderEventSchemas();
    expect(Object.keys(files)).toHaveLength(EVENT_TYPES.length);
    for (const [file, text] of Object.entries(files)) {
      let committed = '';
      try {
        committed = readFileSync(join(EVENTS_DIR, file), 'utf8');
      } catch {
        // missing: reported below
      }
      expect(committed === text, `docs/events/${file} is missing or out of date: run npm run events`).toBe(true);
    }
  });

  it('cover every detail type the code publishes by constant', () => {
    expect(EVENT_TYPES).toEqual(
      expect.arrayContaining([SPLIT_BRAIN_EVENT, DEPENDENTS_SCALED_DOWN, DEPENDENTS_SCALED_UP, DEPENDENTS_RESTARTED]),
    );
  });

  it.each<[string, string, Record<string, unknown>]>([
    ['an unknown type', 'ShootExploded', { project: 'dev', shoot: 'a' }],
    ['a missing member', 'MigrationFailed', { project: 'dev', shoot: 'a', migrationId: 'm' }],
    ['a wrong type', 'ShootCreated', { project: 'dev', shoot: 'a', seedName: 7 }],
  ])('refuse to build %s', (_name, type, detail) => {
    expect(() => buildEvent(type, detail)).toThrow(InvalidEventError);
  });

  it('keep additive members', () => {
    expect(buildEvent('SeedDeleted', { seed: 'aws-eu1', reason: 'operator' })).toEqual({
      seed: 'aws-eu1',
      reason: 'operator',
    });
  });

  it('fit what the garden service publishes over a lifecycle', async () => {
    // Prepare: a sink that builds every event as the EventBridge sink does.
    const published: string[] = [];
    const events: EventSink = {
      publish: async (type, detail) => void published.push(type, JSON.stringify(buildEvent(type, detail))),
    };
    const repository = new MemoryGardenRepository();
    const service = new GardenService({
      repository,
      events,
      provisioner: { provision: async (n) => ({ commandQueueUrl: `q/${n}` }), deprovision: async () => {} },
    });
    const steps = new ShootOperationSteps({
      repo: repository,
      owners: new InMemoryOwnerRecords(),
      internalDomain: 'internal.test',
      events,
      clock: { now: () => new Date() },
    });
    /** The agent's side of an operation, as the operate-shoot state machine relays it. */
    const operate = async (name: string) => {
      const ref = { project: 'dev', name, operationId: (await repository.getShoot('dev', name))!.status.operation!.id };
      const sent = await steps.dispatch(ref);
      if (sent.superseded) throw new Error('superseded');
      const result =
        sent.command.type === 'delete-control-plane'
          ? { deleted: true, extensionsDropped: 0 }
          : { extensions: [], etcdReady: true };
      await steps.succeed(ref, commandSuccess(sent.command as never, result as never, new Date()));
    };
    // Act
    await service.putSeed('aws-eu1', seedBody());
    await service.heartbeat('aws-eu1', {
      conditions: [
        { type: 'GardenletReady', status: 'True' },
        { type: 'BackupBucketsReady', status: 'True' },
      ],
    });
    await service.putShoot('dev', 'placed', shootBody({ spec: { seedName: 'aws-eu1' } }));
    await operate('placed');
    await service.putShoot(
      'dev',
      'scheduled',
      shootBody({ spec: { tolerations: [{ key: 'seed.gardener.cloud/protected' }] } }),
    );
    await service.putShoot('dev', 'nowhere', shootBody({ spec: { region: 'ap-south-1' } }));
    for (const n of ['placed', 'scheduled', 'nowhere']) {
      await service.patchShoot('dev', n, {
        metadata: { annotations: { 'confirmation.gardener.cloud/deletion': 'true' } },
      });
      await service.deleteShoot('dev', n);
      if (n !== 'nowhere') await operate(n);
    }
    await service.deleteSeed('aws-eu1');
    // Assess
    expect(published.filter((_, i) => i % 2 === 0)).toEqual([
      'SeedRegistered',
      'SeedReady',
      'ShootCreated',
      'ShootOperationSucceeded',
      'ShootCreated',
      'ShootScheduled',
      'ShootCreated',
      'ShootUnschedulable',
      'ShootOperationRequested',
      'ShootOperationSucceeded',
      'ShootDeleted',
      'ShootOperationRequested',
      'ShootOperationSucceeded',
      'ShootDeleted',
      'ShootDeleted',
      'SeedDeleted',
    ]);
  });
});
