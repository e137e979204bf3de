import { describe, expect, it } from 'vitest';
import type { SeedCommand } from '../../../core/commands/schema.js';
import { MemoryGardenRepository } from '../../../core/garden/memory-repository.js';
import { GardenService } from '../../../core/garden/service.js';
import { InMemoryOwnerRecords } from '../../../core/ownership/memory-owner-records.js';
import { provisionControlPlane } from '../../../core/provisioning/control-plane.js';
import { seedBody, shootBody } from '../garden/builders.js';

async function placed(options: { backup?: boolean } = {}) {
  const repo = new MemoryGardenRepository();
  const garden = new GardenService({ repository: repo });
  await garden.putSeed('seed-a', seedBody({ spec: options.backup === false ? { backup: undefined } : {} }));
  await garden.putShoot('dev', 'api1', shootBody({ spec: { seedName: 'seed-a', hibernation: { enabled: false } } }));
  return { shoot: (await repo.getShoot('dev', 'api1'))!, seed: (await repo.getSeed('seed-a'))! };
}

function queue() {
  const sent: { seed: string; command: SeedCommand }[] = [];
  return { sent, send: async (seed: string, command: SeedCommand) => void sent.push({ seed, command }) };
}

const DOMAIN = 'internal.gardenless.test';

describe('provisioning a placed shoot', () => {
  it('names the seed in the owner record and sends create-control-plane, idempotently', async () => {
    const { shoot, seed } = await placed();
    const owners = new InMemoryOwnerRecords();
    const q = queue();
    const first = await provisionControlPlane({ shoot, seed, owners, queue: q, internalDomain: DOMAIN, now: new Date() });
    const again = await provisionControlPlane({ shoot, seed, owners, queue: q, internalDomain: DOMAIN, now: new Date() });
    expect(first).toMatchObject({ action: 'provisioned', ownerRecord: `owner.api1.dev.${DOMAIN}` });
    expect(again).toEqual(first);
    expect((await owners.get(`owner.api1.dev.${DOMAIN}`))?.value).toBe(seed.status.identity);
    expect(q.sent.map((s) => s.command.commandId)).toEqual([first.action === 'provisioned' ? first.commandId : '', first.action === 'provisioned' ? first.commandId : '']);
    expect(q.sent[0]?.command).toMatchObject({ type: 'create-control-plane', seed: 'seed-a', controlPlane: { hibernated: false, failureTolerance: 'zone', backup: { bucket: 'gl-backup-aws-eu1' } } });
  });

  it('never takes a record that names another seed (a migration owns it)', async () => {
    const { shoot, seed } = await placed();
    const owners = new InMemoryOwnerRecords();
    await owners.set({ name: `owner.api1.dev.${DOMAIN}`, value: 'seed-b-identity' });
    const q = queue();
    const outcome = await provisionControlPlane({ shoot, seed, owners, queue: q, internalDomain: DOMAIN, now: new Date() });
    expect(outcome.action).toBe('skipped');
    expect(q.sent).toEqual([]);
    expect((await owners.get(`owner.api1.dev.${DOMAIN}`))?.value).toBe('seed-b-identity');
  });

  it('skips a seed without a backup bucket', async () => {
    const { shoot, seed } = await placed({ backup: false });
    const q = queue();
    expect((await provisionControlPlane({ shoot, seed, owners: new InMemoryOwnerRecords(), queue: q, internalDomain: DOMAIN, now: new Date() })).action).toBe('skipped');
    expect(q.sent).toEqual([]);
  });
});
