import { loadAllYaml, type KubernetesObject } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../../local/emulator.js';
import { ensureKubeTools, kubeTools } from '../../../local/kube/tools.js';

const run = promisify(execFile);
export const CHART = join(PROJECT_ROOT, 'deploy', 'chart');

/** `helm template` of the seed agent's chart with `--set` values, as Kubernetes objects. */
export async function renderChart(options: {
  release: string;
  namespace: string;
  set: Record<string, string>;
  kubeVersion: string;
}): Promise<KubernetesObject[]> {
  const tools = kubeTools();
  await ensureKubeTools(tools, ['helm']);
  const args = [
    'template',
    options.release,
    CHART,
    '--namespace',
    options.namespace,
    '--kube-version',
    options.kubeVersion,
    ...Object.entries(options.set).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
  ];
  const { stdout } = await run(tools.helm, args, {
    env: {
      ...process.env,
      HELM_CACHE_HOME: join(PROJECT_ROOT, '.tools', 'helm-home'),
      HELM_CONFIG_HOME: join(PROJECT_ROOT, '.tools', 'helm-home'),
    },
  });
  return (loadAllYaml(stdout) as (KubernetesObject | null)[]).filter((o): o is KubernetesObject => o !== null);
}
