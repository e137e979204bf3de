import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { KubeCluster } from '../../../local/kube/cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the run's test seed cluster is described once a suite started it (see ./seed-cluster.ts). */
    kubeClusterDir: string;
  }
}

/**
 * Reserves a directory for this run's test seed cluster; nothing starts here. The first suite that needs
 * the cluster starts it (`testSeedCluster`), later suites reuse it, and this teardown stops it, so a run
 * without kubernetes suites pays nothing. `KEEP_KUBE_DIR=1` keeps the logs and data afterwards.
 */
export default function setup(project: TestProject): () => Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gl-kube-'));
  project.provide('kubeClusterDir', dir);
  return async () => {
    const state = join(dir, 'cluster.json');
    if (existsSync(state)) await KubeCluster.attach(state).stop();
    if (process.env.KEEP_KUBE_DIR) console.log(`kube: test seed cluster files kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  };
}
