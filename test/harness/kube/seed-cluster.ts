import { existsSync, mkdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { KubeCluster, startKubeCluster } from '../../../local/kube/cluster.js';
import { startNodeCluster } from '../../../local/kube/node-cluster.js';

/**
 * The run's test seed cluster (kube-apiserver, controller manager, scheduler, kwok), started by the first
 * suite that asks and reused by the others (the suites run one at a time, each in its own worker; the
 * cluster outlives them and the global teardown stops it). A lock directory keeps two starts apart.
 */
export function testSeedCluster(): Promise<KubeCluster> {
  return shared('cluster', (dir, stateFile) =>
    startKubeCluster({ dir, stateFile, tiedToProcess: false, log: (line) => console.log(line) }),
  );
}

/**
 * The run's test seed with a real node (local/kube/node-cluster.ts: containerd, the kubelet and
 * kube-proxy in a network namespace of their own; the gardenless image imported), shared as
 * `testSeedCluster` is. A run killed before its teardown leaves it to the next start's sweep.
 */
export function testSeedNode(): Promise<KubeCluster> {
  return shared('node', (dir, stateFile) =>
    startNodeCluster({
      dir,
      stateFile,
      tiedToProcess: false,
      ownerPid: inject('kubeRunOwner'),
      images: ['gardenless'],
      log: (line) => console.log(line),
    }),
  );
}

async function shared(
  name: 'cluster' | 'node',
  start: (dir: string, stateFile: string) => Promise<KubeCluster>,
): Promise<KubeCluster> {
  const dir = inject('kubeClusterDir');
  const state = join(dir, `${name}.json`);
  const lock = join(dir, `${name}-starting.lock`);
  for (;;) {
    if (existsSync(state)) {
      const cluster = KubeCluster.attach(state);
      if (await cluster.ready()) return cluster;
      throw new Error(`the run's test seed ${name} does not answer /readyz any more\n${cluster.logs()}`);
    }
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Another suite is starting it: wait for its state file.
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return await start(join(dir, name), state);
  } finally {
    rmdirSync(lock);
  }
}
