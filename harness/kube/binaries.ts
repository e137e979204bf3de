import { request } from 'node:https';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../local/emulator.js';
import { kubeBinDir } from '../../seed/agent/kube/binaries.js';
import { ensureKubeTools, kubeTools } from '../../local/kube/tools.js';

/**
 * Stand-ins for kube-apiserver (a Node HTTPS server answering health), kube-controller-manager and
 * kube-scheduler (processes that only run): for tests that exercise how the local runtime hosts a
 * control plane (supervision, load balancer, fence, probes) but not Kubernetes itself. Real binaries
 * cost hundreds of megabytes and seconds of CPU per control plane.
 */
export const FAKE_KUBE_BIN_DIR = join(PROJECT_ROOT, 'harness', 'fixtures', 'fake-kube');

/** The real binaries scripts/build-kube.sh builds. */
export const REAL_KUBE_BIN_DIR = kubeBinDir(PROJECT_ROOT);

/**
 * REAL_KUBE_BIN_DIR once its binaries are there: on a fresh machine `npm test` builds them in the
 * background while other suites run, and a suite that needs them waits here for that build.
 */
export async function realKubeBinDir(): Promise<string> {
  const tools = kubeTools(PROJECT_ROOT);
  await ensureKubeTools(tools, ['kubeApiServer', 'kubeControllerManager', 'kubeScheduler', 'kubectl'], {
    log: (line) => console.log(line),
  });
  return REAL_KUBE_BIN_DIR;
}

/** A GET over TLS that names `servername` (SNI) and checks the certificate against `ca`. */
export function httpsGet(
  url: string,
  options: { servername: string; ca: string; timeoutMs?: number },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { servername: options.servername, ca: options.ca, timeout: options.timeoutMs ?? 2_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}
