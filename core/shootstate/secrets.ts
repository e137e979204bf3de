import { z } from 'zod';

/**
 * The secrets a shoot's control plane keeps for its whole life, wherever it runs (Gardener's ShootState
 * carries them as `spec.gardener` entries that its secrets manager marks `persist`): generated once when the
 * shoot is created, so that a certificate, a kubeconfig or a ServiceAccount token issued before a migration
 * is still valid after it, and Secrets encrypted at rest in etcd stay readable. PEM throughout.
 */
export interface ShootSecrets {
  /** Signs kube-apiserver's serving certificate; every kubeconfig trusts it (`certificate-authority-data`). */
  clusterCA: CertificateAndKeyPem;
  /** Signs client certificates: the kubeconfigs the garden issues and the components' own. */
  clientCA: CertificateAndKeyPem;
  /** Signs and verifies ServiceAccount tokens (`--service-account-signing-key-file`, `--service-account-key-file`). */
  serviceAccountKey: { privateKey: string; publicKey: string };
  /** The key kube-apiserver encrypts Secrets with in etcd (an EncryptionConfiguration's `aescbc` provider). */
  etcdEncryption: { provider: 'aescbc'; keyName: string; secret: string };
  /**
   * Signs the certificates etcd's members present to each other, as server and as client (Gardener's
   * `ca-etcd-peer`): a member trusts a peer only with a certificate from it, so peer traffic between seeds
   * is mutually authenticated by the shoot itself. Absent only in secrets sealed before it existed, until
   * the garden's keeper adds it (`ShootSecretsKeeper.ensure`).
   */
  etcdPeerCA?: CertificateAndKeyPem;
  createdAt: string;
}

export interface CertificateAndKeyPem {
  certificate: string;
  privateKey: string;
}

const pemBlock = (label: string) =>
  z
    .string()
    .max(16_384)
    .refine((s) => s.includes(`-----BEGIN ${label}-----`) && s.includes(`-----END ${label}-----`), {
      message: `must be a PEM ${label}`,
    });

const certificateAndKey = z
  .object({ certificate: pemBlock('CERTIFICATE'), privateKey: pemBlock('PRIVATE KEY') })
  .strict();

export const shootSecretsSchema = z
  .object({
    clusterCA: certificateAndKey,
    clientCA: certificateAndKey,
    serviceAccountKey: z.object({ privateKey: pemBlock('PRIVATE KEY'), publicKey: pemBlock('PUBLIC KEY') }).strict(),
    etcdEncryption: z
      .object({
        provider: z.literal('aescbc'),
        keyName: z.string().regex(/^[a-z0-9-]{1,63}$/),
        // 32 bytes: aescbc takes 16, 24 or 32; AES-256 here.
        secret: z.string().regex(/^[A-Za-z0-9+/]{43}=$/, 'must be 32 bytes, base64'),
      })
      .strict(),
    etcdPeerCA: certificateAndKey.optional(),
    createdAt: z.string().datetime(),
  })
  .strict();
