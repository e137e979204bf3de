import { kubernetesRuntime } from '../../seed/kubernetes/agent.js';
import { contractSecrets, inMemoryOwnersAndBuckets, seedRuntimeContract } from '../contract/seed-runtime.contract.js';
import { testSeedCluster } from '../harness/kube/seed-cluster.js';

// The kubernetes runtime against a real kube-apiserver with kwok nodes. kwok's pods run no containers,
// so the buckets are in memory here: the etcd data path is the local runtime's contract run.
seedRuntimeContract('kubernetes (a real kube-apiserver, kwok nodes)', {
  project: 'kcontract',
  fixture: async () => {
    const cluster = await testSeedCluster();
    const { setOwner, backups, ...stores } = inMemoryOwnersAndBuckets();
    const secrets = contractSecrets('kube-contract');
    const { runtime } = kubernetesRuntime({
      seed: 'kube-contract',
      kubeConfig: cluster.kubeConfig(),
      zones: cluster.info.zones,
      sidecar: {
        identity: 'kube-contract-0001',
        owner: { mode: 'dns', internalDomain: 'gardenless.test' },
        aws: { region: 'eu-west-1' },
      },
      ...stores,
      openSecrets: secrets.openSecrets,
    });
    return {
      runtime,
      seal: secrets.seal,
      seed: 'kube-contract',
      bucket: 'gl-backup-kube-contract',
      stateBucket: 'gl-state',
      setOwner,
      backups,
      settleMs: 60_000,
      diagnostics: () => cluster.logs(10),
    };
  },
});
