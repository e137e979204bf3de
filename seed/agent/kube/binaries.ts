import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../../local/project-root.js';

/**
 * Where scripts/build-kube.sh puts kube-apiserver, kube-controller-manager, kube-scheduler and kubectl:
 * `.tools/kubernetes-v<config.kubernetesVersion>/bin` of the repository the agent runs from (its sources,
 * or the CLI built into dist/cli).
 */
export function kubeBinDir(root = PROJECT_ROOT): string {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { config: { kubernetesVersion: string } };
  return join(root, '.tools', `kubernetes-v${pkg.config.kubernetesVersion}`, 'bin');
}
