import { randomBytes } from 'node:crypto';
import type { ShootSecrets } from '../shootstate/secrets.js';
import { newCertificateAuthority, newSigningKeyPair } from './certificates.js';

/** A shoot's secrets, made once when it is created (docs/design.md section 14). */
export async function generateShootSecrets(now: Date): Promise<ShootSecrets> {
  const [clusterCA, clientCA, serviceAccountKey] = await Promise.all([
    newCertificateAuthority({ commonName: 'kubernetes', now }),
    newCertificateAuthority({ commonName: 'kubernetes-client', now }),
    newSigningKeyPair(),
  ]);
  return {
    clusterCA,
    clientCA,
    serviceAccountKey,
    etcdEncryption: { provider: 'aescbc', keyName: 'key1', secret: randomBytes(32).toString('base64') },
    createdAt: now.toISOString(),
  };
}
