import { defineConfig } from 'vitest/config';

// The AWS SDK's warning that its 2027 releases need Node 22, in the test processes and what they start.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

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
