import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../local/emulator.js';
import { ENDPOINTS_FILE } from '../../local/landscape-file.js';

/**
 * The README's quick start, run as written: every line of the block between `<!-- quick-start -->` and
 * `<!-- /quick-start -->` in order, in a shell at the repository root, on a fresh local landscape (its own
 * emulator and stack, not the suite's). Each command must exit 0; the outputs are checked for what the
 * README's comments promise. A landscape already running here (`.landscape/endpoints.json`) is left alone:
 * the test would stop it, so it is skipped then, with the reason.
 */
function quickStart(): string[] {
  const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
  const block = /<!-- quick-start -->\s*```bash\n([\s\S]*?)```\s*<!-- \/quick-start -->/.exec(readme);
  if (!block) throw new Error('README.md has no quick-start block');
  return block[1]!
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l !== '');
}

function sh(command: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    // A user's shell: none of the test run's AWS settings (the suite's emulator) leak into the landscape.
    const env = Object.fromEntries(
      Object.entries(process.env).filter(
        ([k]) => !k.startsWith('AWS_') && !k.startsWith('CDK_') && k !== 'GARDENLESS_API_URL',
      ),
    );
    const child = spawn('bash', ['-c', command], {
      cwd: PROJECT_ROOT,
      env: { ...env, CI: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, out }));
  });
}

const running = existsSync(ENDPOINTS_FILE);

describe('the README quick start', () => {
  it('parses into the commands the README shows', () => {
    expect(quickStart()).toEqual([
      'npm start',
      'bin/gardenless seed list',
      'bin/gardenless shoot list -A',
      'bin/gardenless shoot get dev/web --wait',
      'bin/gardenless shoot kubeconfig dev/web > kc',
      '.tools/kubernetes-v1.30.14/bin/kubectl --kubeconfig kc get namespaces',
      '.tools/kubernetes-v1.30.14/bin/kubectl --kubeconfig kc create configmap hello --from-literal=from=quick-start',
      'bin/gardenless shoot migrate dev/web --dry-run',
      'bin/gardenless shoot migrate dev/web --watch',
      'bin/gardenless shoot get dev/web',
      '.tools/kubernetes-v1.30.14/bin/kubectl --kubeconfig kc get configmap hello',
      'npm run demo',
      'npm run stop',
    ]);
  });

  it.skipIf(running)(
    'reaches a running shoot, migrates it, shows the evidence and stops, every command as written',
    async () => {
      const outputs: Record<string, string> = {};
      try {
        for (const command of quickStart()) {
          const { code, out } = await sh(command);
          outputs[command] = out;
          expect(code, `${command}\n${out}`).toBe(0);
        }
      } finally {
        if (existsSync(ENDPOINTS_FILE)) await sh('npm run stop');
        rmSync(join(PROJECT_ROOT, 'kc'), { force: true });
      }
      const o = (c: string) => outputs[c]!;
      expect(o('bin/gardenless seed list')).toMatch(/^local-a\s+local\s+local-1\s+\S+\s+True\s/m);
      expect(o('bin/gardenless seed list')).toMatch(/^local-c\s+local\s+local-1\s+\S+\s+True\s+true\s/m);
      expect(o('bin/gardenless shoot list -A')).toMatch(/^dev\s+web\s+local-[abc]\s/m);
      expect(o('bin/gardenless shoot get dev/web --wait')).toMatch(/^web\s+local-[abc]\s+-\s+false\s+Create /m);
      // The shoot's own kube-apiserver, through the kubeconfig as printed, right after its Create succeeded.
      expect(o('.tools/kubernetes-v1.30.14/bin/kubectl --kubeconfig kc get namespaces')).toMatch(
        /^kube-system\s+Active\s/m,
      );
      const source = /^web\s+(local-[abc])\s/m.exec(o('bin/gardenless shoot get dev/web --wait'))![1];
      const destination = /destination: +(local-[abc])/.exec(o('bin/gardenless shoot migrate dev/web --dry-run'))![1];
      expect(destination).not.toBe(source);
      // Both local seeds report live-walk and dev/web runs one etcd: mode auto walks it live.
      expect(o('bin/gardenless shoot migrate dev/web --dry-run')).toMatch(
        /path: +live \(the source's last heartbeat is .*both seeds walk etcd live/,
      );
      expect(o('bin/gardenless shoot migrate dev/web --watch')).toMatch(/Succeeded/);
      expect(o('bin/gardenless shoot get dev/web')).toMatch(new RegExp(`^web\\s+${destination}\\s`, 'm'));
      // The ConfigMap written before the migration, read right after it with the same kubeconfig: the source's
      // load balancer hands kubectl's connections on to the destination's until the API record names it.
      expect(o('.tools/kubernetes-v1.30.14/bin/kubectl --kubeconfig kc get configmap hello')).toMatch(/^hello\s+1\s/m);
      expect(o('npm run demo')).toMatch(/keys in the destination etcd \([^)]*\): (\d+) of \1 written on local-[abc]/);
      // The API record named the demo's source seed's load balancer before and the destination's after.
      const lb: Record<string, string> = { 'local-a': '127.0.0.2', 'local-b': '127.0.0.3', 'local-c': '127.0.0.4' };
      const apiBefore = /API record before: +api\.web\.dev\.\S+ = A (\S+) \(TTL \d+ s\) +\(seed (local-[abc])\)/.exec(
        o('npm run demo'),
      );
      const apiAfter = /API record after: +api\.web\.dev\.\S+ = A (\S+) \(TTL \d+ s\) +\(seed (local-[abc]),/.exec(
        o('npm run demo'),
      );
      expect(apiBefore?.slice(1), o('npm run demo')).toEqual([lb[destination!], destination]);
      expect(apiAfter?.[2]).not.toBe(destination);
      expect(apiAfter?.[1]).toBe(lb[apiAfter![2]!]);
      expect(Object.values(outputs).join('\n')).not.toMatch(/NodeVersionSupportWarning/);
    },
    1_800_000,
  );
});
