import { InMemoryBlobStore } from '../../core/shootstate/index.js';
import { InMemorySnapshotStore, makeSnapshot } from '../../core/snapshots/index.js';
import { KubernetesRuntime } from '../../seed/kubernetes/runtime.js';
import { seedRuntimeContract } from '../contract/seed-runtime.contract.js';
import { testSeedCluster } from '../harness/kube/seed-cluster.js';

// The kubernetes runtime against a real kube-apiserver with kwok nodes. kwok's pods run no containers,
// so the bucket is in memory here: the etcd data path is the local runtime's contract run.
seedRuntimeContract('kubernetes (a real kube-apiserver, kwok nodes)', {
  project: 'kcontract',
  fixture: async () => {
    const cluster = await testSeedCluster();
    const snapshots = new InMemorySnapshotStore();
    const blobs = new InMemoryBlobStore();
    const owned = new Set<string>();
    const runtime = new KubernetesRuntime({
      seed: 'kube-contract',
      kubeConfig: cluster.kubeConfig(),
      zones: cluster.info.zones,
      sidecar: { identity: 'kube-contract-0001', internalDomain: 'gardenless.test', owner: { mode: 'dns' }, region: 'eu-west-1' },
      blobStore: () => blobs,
      snapshotStore: () => snapshots,
      ownerCheck: async (shoot) => (owned.has(shoot.technicalID) ? 'owner' : 'not-owner'),
    });
    return {
      runtime,
      seed: 'kube-contract',
      bucket: 'gl-backup-kube-contract',
      stateBucket: 'gl-state',
      setOwner: async (shoot, yes) => void (yes ? owned.add(shoot.technicalID) : owned.delete(shoot.technicalID)),
      backups: async (shoot) => {
        const full = makeSnapshot({ technicalID: shoot.technicalID, kind: 'Full', startRevision: 0, lastRevision: 42, createdOn: 1, compressionSuffix: '', final: false });
        await snapshots.put(full.key, new Uint8Array([1]));
        return 42;
      },
      settleMs: 60_000,
      diagnostics: () => cluster.logs(10),
    };
  },
});
