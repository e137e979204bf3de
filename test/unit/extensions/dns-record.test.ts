import { describe, expect, it } from 'vitest';
import {
  annotate,
  externalKey,
  MIGRATE_ORDER,
  memoryActuators,
  MemoryExtensionWorld,
  operate,
  RESTORE_ORDER,
  shootExtensions,
  type ExtensionResource,
} from '../../../core/extensions/index.js';

const NOW = new Date('2025-01-01T00:00:00Z');
const technicalID = 'shoot--dev--api1';
const API = 'api.api1.dev.shoots.example';

function dnsRecord(): ExtensionResource {
  return shootExtensions({ technicalID, apiDomain: API }).find((r) => r.kind === 'DNSRecord')!;
}

describe('the DNSRecord extension kind', () => {
  it('comes up after the control plane (it needs its load balancer) and is migrated before it', () => {
    expect(RESTORE_ORDER.indexOf('DNSRecord')).toBe(RESTORE_ORDER.indexOf('ControlPlane') + 1);
    expect(MIGRATE_ORDER.indexOf('DNSRecord')).toBeLessThan(MIGRATE_ORDER.indexOf('ControlPlane'));
    expect(dnsRecord()).toMatchObject({
      name: `${technicalID}-external`,
      purpose: 'external',
      spec: { type: 'aws-route53', name: API },
    });
  });

  it('keeps its record through migrate and restore: state in status, the record adopted, never recreated', async () => {
    // Prepare
    const world = new MemoryExtensionWorld();
    const created = await operate({
      resource: dnsRecord(),
      actuators: memoryActuators({ world, seed: 'source' }),
      now: NOW,
    });

    // Act
    const migrated = await operate({
      resource: annotate(created.resource!, 'migrate'),
      actuators: memoryActuators({ world, seed: 'source' }),
      now: NOW,
    });
    const carried = annotate({ ...dnsRecord(), status: { state: migrated.resource!.status.state } }, 'restore');
    const restored = await operate({
      resource: carried,
      actuators: memoryActuators({ world, seed: 'destination' }),
      now: NOW,
    });
    const sourceAgain = await operate({
      resource: migrated.resource!,
      actuators: memoryActuators({ world, seed: 'source' }),
      now: NOW,
    });

    // Assess
    const key = externalKey(dnsRecord());
    expect(migrated.resource?.status.state).toMatchObject({ kind: 'DNSRecord', name: API });
    expect(restored.action).toBe('restore');
    expect(restored.resource?.status.state).toEqual(migrated.resource?.status.state);
    expect(world.externalResource(key)?.creations).toBe(1);
    expect(world.seedObjects('source')).toEqual([]);
    expect(world.seedObjects('destination')).toEqual([key]);
    // The source never reconciles what it handed over.
    expect(sourceAgain.action).toBe('skip');
  });

  it('restores without saved state by reconciling (a bad path whose state was never saved) and deletes its record', async () => {
    const world = new MemoryExtensionWorld();
    const restored = await operate({
      resource: annotate(dnsRecord(), 'restore'),
      actuators: memoryActuators({ world, seed: 'destination' }),
      now: NOW,
    });
    expect(restored.error).toBeUndefined();
    const deleted = await operate({
      resource: { ...restored.resource!, deletionTimestamp: NOW.toISOString() },
      actuators: memoryActuators({ world, seed: 'destination' }),
      now: NOW,
    });
    expect(deleted.resource).toBeUndefined();
    expect(world.externalKeys()).toEqual([]);
  });
});
