import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The suites that start the run's test seed clusters (`testSeedCluster`, `testSeedNode`) or run the real
 * Kubernetes binaries (`realKubeBinDir`). On a machine
 * that has not built the clusters' binaries and images yet, `npm test` builds them behind the tests; these
 * suites run last, so that the build has the whole run to finish and they rarely wait for it.
 * `test/unit/kube/sequencer.test.ts` keeps this list equal to the files that call either.
 */
export const KUBE_SUITES = [
  'cli.test.ts',
  'dependency-watchdog-agent.test.ts',
  'kubectl-bad-path.test.ts',
  'kubectl-zone.test.ts',
  'kubectl.test.ts',
  'kubernetes-node.test.ts',
  'kubernetes-seed.test.ts',
  'runtime-contract-kubernetes.test.ts',
  'seed-agent-chart.test.ts',
] as const;

export const needsKube = (moduleId: string): boolean =>
  KUBE_SUITES.some((name) => moduleId.endsWith(`/test/integration/${name}`));

/** Vitest's order, with the suites that need the test seed cluster moved to the end (in that order). */
export default class KubeSuitesLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return [...sorted.filter((f) => !needsKube(f.moduleId)), ...sorted.filter((f) => needsKube(f.moduleId))];
  }
}
