import { ControlPlaneRuntime } from '../../../seed/agent/control-plane-runtime.js';
import { MemoryHosting } from '../../../seed/agent/memory-hosting.js';
import { inMemoryOwnersAndBuckets, seedRuntimeContract } from '../../contract/seed-runtime.contract.js';

seedRuntimeContract('memory (ControlPlaneRuntime on MemoryHosting)', {
  fixture: async () => {
    const { setOwner, backups, ...stores } = inMemoryOwnersAndBuckets();
    const runtime = new ControlPlaneRuntime({ seed: 'memory-seed', hosting: new MemoryHosting(), ...stores });
    return {
      runtime,
      seed: 'memory-seed',
      bucket: 'gl-backup-memory-seed',
      stateBucket: 'gl-state',
      setOwner,
      backups,
      settleMs: 1_000,
    };
  },
});
