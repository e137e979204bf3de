import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { issueEtcdPeerCertificate } from '../../core/pki/certificates.js';
import { shootSecretsSchema, type ShootSecrets } from '../../core/shootstate/secrets.js';
import type { EtcdPeerTls } from '../backup-restore/etcd-process.js';

/**
 * Files that hold keys on the local runtime: mode 0600 in a directory of mode 0700, written to a temporary
 * file first and renamed, so that a reader never sees half a key and nobody but this user ever sees one.
 */
export function writeSecretFile(path: string, content: string): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** Where a plane keeps its secrets: `<plane dir>/pki/`. */
export function pkiDir(planeDir: string): string {
  return join(planeDir, 'pki');
}

const SECRETS_FILE = 'shoot-secrets.json';

/** Keeps the shoot's secrets next to its data, for its components and for an agent that restarts. */
export function writeShootSecrets(planeDir: string, secrets: ShootSecrets): void {
  writeSecretFile(join(pkiDir(planeDir), SECRETS_FILE), JSON.stringify(secrets));
}

/** The shoot's secrets as kept here, or undefined when none were delivered (or the file does not parse). */
export function readShootSecrets(planeDir: string): ShootSecrets | undefined {
  try {
    const parsed = shootSecretsSchema.safeParse(JSON.parse(readFileSync(join(pkiDir(planeDir), SECRETS_FILE), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    // None delivered yet.
    return undefined;
  }
}

/** How a member planned now speaks to its peers: TLS where the shoot's secrets hold the etcd peer CA. */
export function etcdPeerScheme(secrets: Pick<ShootSecrets, 'etcdPeerCA'> | undefined): 'https' | 'http' {
  return secrets?.etcdPeerCA ? 'https' : 'http';
}

/**
 * One etcd member's peer TLS files in `dir` (its certificate from the shoot's etcd peer CA for the hosts
 * of `peerUrls`, its key, and the CA's certificate, never the CA's key), made at every start as the
 * kube-apiserver's are. Undefined when the shoot's secrets hold no peer CA (sealed before it): plain peers.
 */
export async function writeEtcdPeerFiles(input: {
  dir: string;
  secrets: Pick<ShootSecrets, 'etcdPeerCA'> | undefined;
  member: string;
  peerUrls: readonly string[];
  now?: Date;
}): Promise<EtcdPeerTls | undefined> {
  const ca = input.secrets?.etcdPeerCA;
  if (ca === undefined) return undefined;
  const issued = await issueEtcdPeerCertificate({
    ca,
    member: input.member,
    peerUrls: input.peerUrls,
    now: input.now ?? new Date(),
  });
  const files = {
    certFile: join(input.dir, 'peer.crt'),
    keyFile: join(input.dir, 'peer.key'),
    trustedCaFile: join(input.dir, 'peer-ca.crt'),
  };
  writeSecretFile(files.keyFile, issued.privateKey);
  writeSecretFile(files.certFile, issued.certificate);
  writeSecretFile(files.trustedCaFile, ca.certificate);
  return files;
}
