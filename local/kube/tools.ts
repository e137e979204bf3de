import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../emulator.js';

/** Where `scripts/build-kube.sh` puts the pinned binaries of the test seed (package.json `config`). */
export interface KubeTools {
  kubernetesVersion: string;
  kwokVersion: string;
  helmVersion: string;
  kubeApiServer: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  kwok: string;
  /** kwok's stage files, by set (`node/fast`, `node/heartbeat-with-lease`, `pod/fast`, `volume/fast`). */
  kwokStages: string;
  helm: string;
}

export function kubeTools(root = PROJECT_ROOT): KubeTools {
  const config = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { config: Record<string, string> }).config;
  const kubernetesVersion = config.kubernetesVersion!;
  const kwokVersion = config.kwokVersion!;
  const helmVersion = config.helmVersion!;
  const kube = join(root, '.tools', `kubernetes-v${kubernetesVersion}`, 'bin');
  const kwok = join(root, '.tools', `kwok-v${kwokVersion}`);
  return {
    kubernetesVersion,
    kwokVersion,
    helmVersion,
    kubeApiServer: join(kube, 'kube-apiserver'),
    kubeControllerManager: join(kube, 'kube-controller-manager'),
    kubeScheduler: join(kube, 'kube-scheduler'),
    kwok: join(kwok, 'bin', 'kwok'),
    kwokStages: join(kwok, 'stages'),
    helm: join(root, '.tools', `helm-v${helmVersion}`, 'bin', 'helm'),
  };
}

/** Throws a clear error naming the set-up step when a binary is missing. */
export function requireTools(tools: KubeTools, which: readonly (keyof KubeTools)[]): void {
  const missing = which.map((k) => tools[k]).filter((path) => !existsSync(path));
  if (missing.length > 0) throw new Error(`missing ${missing.join(', ')}: run npm run setup (scripts/build-kube.sh builds them once from the Go module proxy)`);
}
