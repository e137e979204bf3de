import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { KubeCluster } from '../../../local/kube/cluster.js';
import { removeNodesOwnedBy } from '../../../local/kube/node-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the run's test seed clusters are described once a suite started them (see ./seed-cluster.ts). */
    kubeClusterDir: string;
    /** This process: its end makes the run's real node stale (a later run's start removes what is left of it). */
    kubeRunOwner: number;
  }
}

/**
 * Reserves a directory for this run's test seed clusters; nothing starts here. The first suite that needs
 * one starts it (`testSeedCluster`, `testSeedNode`), later suites reuse it, and this teardown stops them,
 * so a run without kubernetes suites pays nothing. `KEEP_KUBE_DIR=1` keeps the logs and data afterwards.
 */
export default function setup(project: TestProject): () => Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gl-kube-'));
  project.provide('kubeClusterDir', dir);
  project.provide('kubeRunOwner', process.pid);
  return async () => {
    for (const name of ['cluster', 'node']) {
      const state = join(dir, `${name}.json`);
      if (existsSync(state)) await KubeCluster.attach(state).stop();
    }
    removeNodesOwnedBy(process.pid, (line) => console.log(line));
    if (process.env.KEEP_KUBE_DIR) console.log(`kube: test seed cluster files kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  };
}
