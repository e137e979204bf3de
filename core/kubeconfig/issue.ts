import { stringify } from 'yaml';
import { certificateNotAfter, issueCertificate } from '../pki/certificates.js';
import type { ShootSecrets } from '../shootstate/secrets.js';

/**
 * The groups of Gardener's two kubeconfig subresources: `shoots/adminkubeconfig` issues a certificate in
 * `system:masters`; `shoots/viewerkubeconfig` one in the viewers' group, which the shoot's control plane
 * binds to a read-only ClusterRole that leaves out Secrets (seed/agent/kube/viewer-rbac.ts).
 */
export const ADMIN_GROUP = 'system:masters';
export const VIEWERS_GROUP = 'gardener.cloud:system:viewers';

export type KubeconfigRole = 'admin' | 'viewer';

export interface KubeconfigInput {
  project: string;
  name: string;
  /** The shoot's API domain as clients reach it (`https://api.<shoot>.<project>.<domain>[:port]`). */
  server: string;
  secrets: Pick<ShootSecrets, 'clusterCA' | 'clientCA'>;
  role: KubeconfigRole;
  /** Who the certificate names (its CN): Kubernetes' user name in audit logs and RBAC. */
  user: string;
  expirationSeconds: number;
  now: Date;
  /**
   * A proxy client-go sends its connections through (`proxy-url`): the local landscape's, which resolves the
   * API domain through the Route 53 zone as a resolver on AWS would. Absent on AWS.
   */
  proxyUrl?: string;
}

export interface IssuedKubeconfig {
  /** The kubeconfig as YAML, with the certificate and key inline. */
  kubeconfig: string;
  expirationTimestamp: string;
}

/** A kubeconfig for one shoot: its API domain, its cluster CA, a client certificate from its client CA. */
export async function issueKubeconfig(input: KubeconfigInput): Promise<IssuedKubeconfig> {
  const client = await issueCertificate({
    ca: input.secrets.clientCA,
    commonName: input.user,
    organizations: [input.role === 'admin' ? ADMIN_GROUP : VIEWERS_GROUP],
    usage: 'client',
    now: input.now,
    validitySeconds: input.expirationSeconds,
  });
  // Gardener's names: `<project>--<shoot>-external` for the cluster, the user and the context.
  const context = `${input.project}--${input.name}-external`;
  const b64 = (pem: string) => Buffer.from(pem).toString('base64');
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: context,
        cluster: {
          server: input.server,
          'certificate-authority-data': b64(input.secrets.clusterCA.certificate),
          ...(input.proxyUrl ? { 'proxy-url': input.proxyUrl } : {}),
        },
      },
    ],
    contexts: [{ name: context, context: { cluster: context, user: context } }],
    'current-context': context,
    users: [
      {
        name: context,
        user: { 'client-certificate-data': b64(client.certificate), 'client-key-data': b64(client.privateKey) },
      },
    ],
  };
  return {
    kubeconfig: stringify(config, { lineWidth: 0 }),
    expirationTimestamp: certificateNotAfter(client.certificate).toISOString(),
  };
}
