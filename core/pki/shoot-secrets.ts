import { randomBytes } from 'node:crypto';
import type { ShootSecrets } from '../shootstate/secrets.js';
import { newCertificateAuthority, newSigningKeyPair, type CertificateAndKey } from './certificates.js';

/** A shoot's secrets, made once when it is created (docs/design.md section 14). */
export async function generateShootSecrets(now: Date): Promise<ShootSecrets> {
  const [clusterCA, clientCA, serviceAccountKey, etcdPeerCA] = await Promise.all([
    newCertificateAuthority({ commonName: 'kubernetes', now }),
    newCertificateAuthority({ commonName: 'kubernetes-client', now }),
    newSigningKeyPair(),
    newEtcdPeerCA(now),
  ]);
  return {
    clusterCA,
    clientCA,
    serviceAccountKey,
    etcdEncryption: { provider: 'aescbc', keyName: 'key1', secret: randomBytes(32).toString('base64') },
    etcdPeerCA,
    createdAt: now.toISOString(),
  };
}

/** The CA of etcd's peer traffic (Gardener's `ca-etcd-peer`); the keeper also adds it to secrets made before it. */
export function newEtcdPeerCA(now: Date): Promise<CertificateAndKey> {
  return newCertificateAuthority({ commonName: 'etcd-peer', now });
}
