import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import type { Reporter, TestRunEndReason } from 'vitest/node';
import KubeSuitesLast from './test/harness/kube/sequencer.js';

// The AWS SDK's warning that its 2027 releases need Node 22, in the test processes and what they start.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// What the tests and the processes they start leave in the temporary directory (a CDK app's cdk.out,
// a fixture's files, the logs a failed suite keeps for its reader) goes into one directory of the run's
// own, removed when the run passes and kept, with a line saying where, when it does not.
const scratch = mkdtempSync(join(tmpdir(), 'gl-vitest-'));
process.env.TMPDIR = scratch;
let runEnded: TestRunEndReason | undefined;
process.on('exit', () => {
  if (runEnded === 'passed') rmSync(scratch, { recursive: true, force: true });
  else console.log(`vitest: the run's temporary files are kept in ${scratch}`);
});
const scratchKeeper: Reporter = {
  onTestRunEnd: (_modules, _errors, reason) => {
    runEnded = reason;
  },
};

export default defineConfig({
  test: {
    reporters: ['default', scratchKeeper],
    // The suites that need the test seed cluster last: a fresh machine builds it while the others run.
    sequence: { sequencer: KubeSuitesLast },
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
