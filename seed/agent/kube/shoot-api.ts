import { request } from 'node:https';
import { viewerClusterRole, viewerClusterRoleBinding } from './viewer-rbac.js';

/** Where and as whom the agent reaches a shoot's kube-apiserver: its client certificate is system:masters. */
export interface ShootApiAccess {
  host: string;
  port: number;
  /** The shoot's cluster CA: the serving certificate is checked under its in-cluster name, `kubernetes`. */
  ca: string;
  certificate: string;
  privateKey: string;
}

export interface ShootApiResponse {
  status: number;
  body: string;
}

/** One request to a shoot's kube-apiserver as the agent. */
export function shootApiRequest(
  access: ShootApiAccess,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 5_000,
): Promise<ShootApiResponse> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: access.host,
        port: access.port,
        method,
        path,
        servername: 'kubernetes',
        ca: access.ca,
        cert: access.certificate,
        key: access.privateKey,
        timeout: timeoutMs,
        headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {},
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * Binds the viewers' group to the read-only ClusterRole in the shoot (idempotent: what exists stays). The
 * objects live in the shoot's etcd, so they move with it; every start of its kube-apiserver checks again.
 */
export async function bindViewers(
  call: (method: string, path: string, body: unknown) => Promise<ShootApiResponse>,
): Promise<void> {
  for (const [collection, object] of [
    ['/apis/rbac.authorization.k8s.io/v1/clusterroles', viewerClusterRole()],
    ['/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', viewerClusterRoleBinding()],
  ] as const) {
    const res = await call('POST', collection, object);
    if (res.status !== 201 && res.status !== 409)
      throw new Error(`POST ${collection} answered ${res.status}: ${res.body.slice(0, 200)}`);
  }
}
