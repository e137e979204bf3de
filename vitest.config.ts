import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], environment: 'node' } },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/harness/global-setup.ts', 'test/harness/kube/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 300_000,
          // The suites share one emulator and one deployed stack; running them one at a time keeps them independent.
          fileParallelism: false,
        },
      },
    ],
  },
});
