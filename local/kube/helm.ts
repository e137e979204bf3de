import { loadAllYaml, type KubernetesObject } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../emulator.js';
import { ensureKubeTools, kubeTools } from './tools.js';

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
  const { stdout } = await run(tools.helm, args, { env: helmEnv() });
  return (loadAllYaml(stdout) as (KubernetesObject | null)[]).filter((o): o is KubernetesObject => o !== null);
}

/** `helm install --wait` of the seed agent's chart into a cluster (the release's objects really created). */
export async function installChart(options: {
  release: string;
  namespace: string;
  kubeconfig: string;
  set: Record<string, string>;
  timeoutSeconds?: number;
}): Promise<string> {
  const tools = kubeTools();
  await ensureKubeTools(tools, ['helm']);
  const { stdout } = await run(
    tools.helm,
    [
      'install',
      options.release,
      CHART,
      '--namespace',
      options.namespace,
      '--create-namespace',
      '--kubeconfig',
      options.kubeconfig,
      '--wait',
      '--timeout',
      `${options.timeoutSeconds ?? 180}s`,
      ...Object.entries(options.set).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
    ],
    { env: helmEnv() },
  );
  return stdout;
}

export async function uninstallChart(options: { release: string; namespace: string; kubeconfig: string }) {
  const tools = kubeTools();
  await run(
    tools.helm,
    ['uninstall', options.release, '--namespace', options.namespace, '--kubeconfig', options.kubeconfig, '--wait'],
    { env: helmEnv() },
  );
}

function helmEnv(): NodeJS.ProcessEnv {
  const home = join(PROJECT_ROOT, '.tools', 'helm-home');
  return { ...process.env, HELM_CACHE_HOME: home, HELM_CONFIG_HOME: home, HELM_DATA_HOME: home };
}
