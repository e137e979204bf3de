import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestSpecification } from 'vitest/node';
import { PROJECT_ROOT } from '../../../local/emulator.js';
import KubeSuitesLast, { KUBE_SUITES } from '../../harness/kube/sequencer.js';

const INTEGRATION = join(PROJECT_ROOT, 'test', 'integration');

describe('the order of the integration suites (a fresh machine builds the test seed behind them)', () => {
  it('names exactly the suites that start a test seed cluster or run real Kubernetes binaries', () => {
    const callers = readdirSync(INTEGRATION).filter(
      (f) =>
        f.endsWith('.test.ts') &&
        /testSeed(Cluster|Node)\(|realKubeBinDir\(/.test(readFileSync(join(INTEGRATION, f), 'utf8')),
    );
    expect(callers.sort()).toEqual([...KUBE_SUITES].sort());
  });

  it('runs them last and keeps the order of the others', async () => {
    // Prepare: no timing cache, so vitest's own order is the given one (unknown files keep their order).
    const ctx = {
      config: { root: PROJECT_ROOT },
      cache: { getFileTestResults: () => undefined, getFileStats: () => undefined },
    };
    const spec = (file: string, project = 'integration') =>
      ({
        moduleId: join(PROJECT_ROOT, 'test', project, file),
        project: { name: project, config: { sequence: { groupOrder: 0 }, isolate: true } },
      }) as unknown as TestSpecification;
    const files = [
      spec('kubernetes-seed.test.ts'),
      spec('fuzz.test.ts'),
      spec('seed-agent-chart.test.ts'),
      spec('lifecycle.test.ts'),
      spec('app.test.ts', 'unit'),
    ];
    // Act
    const sorted = await new KubeSuitesLast(ctx as never).sort(files);
    // Assess
    expect(sorted.map((s) => s.moduleId.slice(PROJECT_ROOT.length))).toEqual([
      '/test/integration/fuzz.test.ts',
      '/test/integration/lifecycle.test.ts',
      '/test/unit/app.test.ts',
      '/test/integration/kubernetes-seed.test.ts',
      '/test/integration/seed-agent-chart.test.ts',
    ]);
  });
});
