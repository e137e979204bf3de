import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../emulator.js';
import { kubeBinDir } from '../../seed/agent/kube/binaries.js';

/** Where `scripts/build-kube.sh` puts the pinned binaries of the test seed (package.json `config`). */
export interface KubeTools {
  kubernetesVersion: string;
  kwokVersion: string;
  helmVersion: string;
  kubeApiServer: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  kubectl: string;
  /** The real node's (local/kube/node-cluster.ts). */
  kubelet: string;
  kubeProxy: string;
  kwok: string;
  /** kwok's stage files, by set (`node/fast`, `node/heartbeat-with-lease`, `pod/fast`, `volume/fast`). */
  kwokStages: string;
  helm: string;
}

export function kubeTools(root = PROJECT_ROOT): KubeTools {
  const config = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { config: Record<string, string> })
    .config;
  const kubernetesVersion = config.kubernetesVersion!;
  const kwokVersion = config.kwokVersion!;
  const helmVersion = config.helmVersion!;
  const kube = kubeBinDir(root);
  const node = join(root, '.tools', `kubernetes-node-v${kubernetesVersion}`, 'bin');
  const kwok = join(root, '.tools', `kwok-v${kwokVersion}`);
  return {
    kubernetesVersion,
    kwokVersion,
    helmVersion,
    kubeApiServer: join(kube, 'kube-apiserver'),
    kubeControllerManager: join(kube, 'kube-controller-manager'),
    kubeScheduler: join(kube, 'kube-scheduler'),
    kubectl: join(kube, 'kubectl'),
    kubelet: join(node, 'kubelet'),
    kubeProxy: join(node, 'kube-proxy'),
    kwok: join(kwok, 'bin', 'kwok'),
    kwokStages: join(kwok, 'stages'),
    helm: join(root, '.tools', `helm-v${helmVersion}`, 'bin', 'helm'),
  };
}

/** Throws a clear error naming the set-up step when a binary is missing. */
export function requireTools(tools: KubeTools, which: readonly (keyof KubeTools)[]): void {
  const missing = which.map((k) => tools[k]).filter((path) => !existsSync(path));
  if (missing.length > 0)
    throw new Error(
      `missing ${missing.join(', ')}: run npm run setup (scripts/build-kube.sh builds them once from the Go module proxy)`,
    );
}

/**
 * Waits until the binaries are built: `scripts/build-kube.sh` waits for a build under way (the one `npm
 * test` starts in the background; it holds the script's lock) and builds what is still missing, then
 * returns at once. A no-op when everything is present.
 */
export async function ensureKubeTools(
  tools: KubeTools,
  which: readonly (keyof KubeTools)[],
  options: { root?: string; log?: (line: string) => void } = {},
): Promise<void> {
  const missing = () => which.map((k) => tools[k]).filter((path) => !existsSync(path));
  if (missing().length === 0) return;
  const root = options.root ?? PROJECT_ROOT;
  const started = Date.now();
  options.log?.(
    `kube: waiting for the test seed's build (scripts/build-kube.sh; background log .tools/build-kube.log)`,
  );
  const output: string[] = [];
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn('bash', [join(root, 'scripts', 'build-kube.sh')], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => output.push(chunk.toString());
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', () => resolve(null));
    child.once('exit', resolve);
  });
  options.log?.(
    `kube: the test seed's binaries are ready after ${Math.round((Date.now() - started) / 1000)} s of waiting`,
  );
  if (code !== 0)
    throw new Error(
      `scripts/build-kube.sh failed (exit ${code}): ${output.join('').trim().split('\n').slice(-5).join(' | ')}`,
    );
  requireTools(tools, which);
}
