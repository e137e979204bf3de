import { existsSync, mkdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { KubeCluster, startKubeCluster } from '../../../local/kube/cluster.js';

/**
 * The run's test seed cluster (kube-apiserver, controller manager, scheduler, kwok), started by the first
 * suite that asks and reused by the others (the suites run one at a time, each in its own worker; the
 * cluster outlives them and the global teardown stops it). A lock directory keeps two starts apart.
 */
export async function testSeedCluster(): Promise<KubeCluster> {
  const dir = inject('kubeClusterDir');
  const state = join(dir, 'cluster.json');
  const lock = join(dir, 'starting.lock');
  for (;;) {
    if (existsSync(state)) {
      const cluster = KubeCluster.attach(state);
      if (await cluster.ready()) return cluster;
      throw new Error(`the run's test seed cluster does not answer /readyz any more\n${cluster.logs()}`);
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
    return await startKubeCluster({
      dir: join(dir, 'cluster'),
      stateFile: state,
      tiedToProcess: false,
      log: (line) => console.log(line),
    });
  } finally {
    rmdirSync(lock);
  }
}
