import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * Where scripts/build-kube.sh puts kube-apiserver, kube-controller-manager, kube-scheduler and kubectl:
 * `.tools/kubernetes-v<config.kubernetesVersion>/bin` of this repository.
 */
export function kubeBinDir(root = REPO_ROOT): string {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { config: { kubernetesVersion: string } };
  return join(root, '.tools', `kubernetes-v${pkg.config.kubernetesVersion}`, 'bin');
}
