import { InMemoryBlobStore } from '../../../core/shootstate/index.js';
import { InMemorySnapshotStore, makeSnapshot } from '../../../core/snapshots/index.js';
import { ControlPlaneRuntime } from '../../../seed/agent/control-plane-runtime.js';
import { MemoryHosting } from '../../../seed/agent/memory-hosting.js';
import { seedRuntimeContract } from '../../contract/seed-runtime.contract.js';

seedRuntimeContract('memory (ControlPlaneRuntime on MemoryHosting)', {
  fixture: async () => {
    const snapshots = new InMemorySnapshotStore();
    const blobs = new InMemoryBlobStore();
    const owned = new Set<string>();
    const runtime = new ControlPlaneRuntime({
      seed: 'memory-seed',
      hosting: new MemoryHosting(),
      blobStore: () => blobs,
      snapshotStore: () => snapshots,
      ownerCheck: async (shoot) => (owned.has(shoot.technicalID) ? 'owner' : 'not-owner'),
    });
    return {
      runtime,
      seed: 'memory-seed',
      bucket: 'gl-backup-memory-seed',
      stateBucket: 'gl-state',
      setOwner: async (shoot, yes) => void (yes ? owned.add(shoot.technicalID) : owned.delete(shoot.technicalID)),
      backups: async (shoot) => {
        const full = makeSnapshot({ technicalID: shoot.technicalID, kind: 'Full', startRevision: 0, lastRevision: 42, createdOn: 1, compressionSuffix: '', final: false });
        await snapshots.put(full.key, new Uint8Array([1]));
        return 42;
      },
      settleMs: 1_000,
    };
  },
});
