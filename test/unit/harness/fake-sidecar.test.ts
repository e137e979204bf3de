import { describe, expect, it } from 'vitest';
import { InMemoryOwnerRecords, ownerRecordName } from '../../../core/ownership/index.js';
import { InMemorySnapshotStore } from '../../../core/snapshots/index.js';
import { FakeSidecar } from '../../../harness/fake-sidecar.js';

const shoot = { project: 'dev', name: 'api1', technicalID: 'shoot--dev--api1' };
const internalDomain = 'internal.gardenless.test';
const name = ownerRecordName({ shoot: shoot.name, project: shoot.project, internalDomain });

function sidecar(options: { waitForOwnership?: boolean } = {}) {
  const snapshots = new InMemorySnapshotStore();
  const records = new InMemoryOwnerRecords();
  // A long interval: the tests step the sidecar with check().
  const fake = new FakeSidecar({
    shoot,
    identity: 'src-1',
    snapshots,
    ownerRecords: records,
    internalDomain,
    revision: 42,
    intervalMs: 60_000,
    now: () => new Date(1_700_000_000_000),
    ...options,
  });
  return { fake, snapshots, records };
}

describe('FakeSidecar', () => {
  it.each([
    { name: 'deleted', change: (r: InMemoryOwnerRecords) => r.delete({ name }) },
    { name: 'changed to the destination', change: (r: InMemoryOwnerRecords) => r.set({ name, value: 'dst-1' }) },
  ])('writes one final full snapshot when the owner record is $name', async ({ change }) => {
    // Prepare
    const { fake, snapshots, records } = sidecar();
    await records.set({ name, value: 'src-1' });
    await fake.start();
    await fake.check();

    // Act
    await change(records);
    await Promise.all([fake.check(), fake.check()]);
    await fake.check();
    await fake.stop();

    // Assess
    const names = (await snapshots.list(shoot.technicalID)).map((s) => s.name);
    expect(names).toEqual(['Full-00000000-00000042-1700000000', 'Full-00000000-00000043-1700000000.final']);
    expect(fake.state).toBe('final');
    expect(fake.finalKey).toBe('shoot--dev--api1/v2/Full-00000000-00000043-1700000000.final');
  });

  it('does not take a final snapshot before the record has named its seed (the garden has not written it yet)', async () => {
    const { fake, snapshots } = sidecar();
    await fake.start();
    await fake.check();
    await fake.stop();

    expect(await snapshots.list(shoot.technicalID)).toHaveLength(1);
    expect(fake.state).toBe('waiting');
  });

  it('takes it at once without waitForOwnership', async () => {
    const { fake, snapshots } = sidecar({ waitForOwnership: false });
    await fake.start();
    await fake.check();

    expect((await snapshots.list(shoot.technicalID)).map((s) => s.final)).toEqual([false, true]);
  });

  it('writes nothing once silenced', async () => {
    const { fake, snapshots, records } = sidecar();
    await records.set({ name, value: 'src-1' });
    await fake.start();
    await fake.check();
    fake.silence();

    await records.delete({ name });
    await fake.check();

    expect(await snapshots.list(shoot.technicalID)).toHaveLength(1);
    expect(fake.state).toBe('silenced');
  });
});
