import { describe, expect, it } from 'vitest';
import type { SeedProvisioner } from '../../../core/garden/context.js';
import { MemoryGardenRepository } from '../../../core/garden/memory-repository.js';
import { GardenService } from '../../../core/garden/service.js';
import { rejection, seedBody } from './builders.js';

class RecordingProvisioner implements SeedProvisioner {
  readonly calls: string[] = [];
  constructor(private readonly failOn?: 'provision' | 'deprovision') {}
  async provision(seedName: string) {
    this.calls.push(`provision ${seedName}`);
    if (this.failOn === 'provision') throw new Error('queue service unavailable');
    return { commandQueueUrl: `https://sqs.local/000000000000/gl-seed-${seedName}` };
  }
  async deprovision(seedName: string) {
    this.calls.push(`deprovision ${seedName}`);
    if (this.failOn === 'deprovision') throw new Error('queue service unavailable');
  }
}

function service(provisioner: SeedProvisioner) {
  const repository = new MemoryGardenRepository();
  const published: string[] = [];
  const svc = new GardenService({
    repository,
    provisioner,
    events: { publish: async (type) => void published.push(type) },
  });
  return { svc, repository, published };
}

describe('seed command queues', () => {
  it('provisions the queue before storing a new seed and records its URL', async () => {
    const provisioner = new RecordingProvisioner();
    const { svc } = service(provisioner);
    const { resource } = await svc.putSeed('aws-eu1', seedBody());
    expect(resource.status.commandQueueUrl).toBe('https://sqs.local/000000000000/gl-seed-aws-eu1');
    await svc.putSeed('aws-eu1', seedBody());
    expect(provisioner.calls).toEqual(['provision aws-eu1']);
  });

  it('writes nothing when the queue cannot be provisioned', async () => {
    const { svc, repository } = service(new RecordingProvisioner('provision'));
    await expect(rejection(svc.putSeed('aws-eu1', seedBody()))).resolves.toMatchObject({
      message: 'queue service unavailable',
    });
    expect(await repository.getSeed('aws-eu1')).toBeUndefined();
  });

  it('removes the queues after the seed, and keeps the deletion when that fails', async () => {
    const ok = service(new RecordingProvisioner());
    await ok.svc.putSeed('aws-eu1', seedBody());
    await ok.svc.deleteSeed('aws-eu1');
    expect(await ok.repository.getSeed('aws-eu1')).toBeUndefined();

    const failing = service(new RecordingProvisioner('deprovision'));
    await failing.svc.putSeed('aws-eu1', seedBody());
    await failing.svc.deleteSeed('aws-eu1');
    expect(await failing.repository.getSeed('aws-eu1')).toBeUndefined();
    expect(failing.published).toContain('SeedDeprovisionFailed');
  });
});
