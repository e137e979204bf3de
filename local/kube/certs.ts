import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ClusterSecrets {
  caCert: string;
  servingCert: string;
  servingKey: string;
  /** Service-account token signing key pair (kube-apiserver verifies, kube-controller-manager signs). */
  serviceAccountKey: string;
  serviceAccountPub: string;
  /** Static token file: one admin token in group system:masters. */
  tokenFile: string;
  token: string;
}

/**
 * A throw-away PKI for one test API server, written into `dir`: a CA (openssl: node:crypto makes keys
 * but no certificates), a serving certificate for 127.0.0.1 and the in-cluster names, a service-account
 * key pair and a static admin token. Nothing here is meant to outlive the test run.
 */
export async function writeClusterSecrets(dir: string): Promise<ClusterSecrets> {
  const p = (name: string) => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run('openssl', [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.crt'),
    '-days',
    '30',
    '-subj',
    '/CN=gardenless-test-ca',
  ]);
  await run('openssl', [
    'req',
    ...ec,
    '-keyout',
    p('apiserver.key'),
    '-out',
    p('apiserver.csr'),
    '-subj',
    '/CN=kube-apiserver',
  ]);
  const san =
    'subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc';
  await writeFile(p('apiserver.ext'), `${san}\nextendedKeyUsage=serverAuth\n`);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    p('apiserver.csr'),
    '-CA',
    p('ca.crt'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-out',
    p('apiserver.crt'),
    '-days',
    '30',
    '-extfile',
    p('apiserver.ext'),
  ]);
  const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  await writeFile(p('sa.key'), sa.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  await writeFile(p('sa.pub'), sa.publicKey.export({ type: 'spki', format: 'pem' }));
  const token = randomBytes(24).toString('hex');
  await writeFile(p('tokens.csv'), `${token},admin,admin,"system:masters"\n`, { mode: 0o600 });
  return {
    caCert: p('ca.crt'),
    servingCert: p('apiserver.crt'),
    servingKey: p('apiserver.key'),
    serviceAccountKey: p('sa.key'),
    serviceAccountPub: p('sa.pub'),
    tokenFile: p('tokens.csv'),
    token,
  };
}

/** A kubeconfig (JSON is YAML) for `server` with a bearer token, trusting `caCert`. */
export function kubeconfigFor(options: { server: string; caCertPem: string; token: string; name?: string }): string {
  const name = options.name ?? 'gardenless-test';
  return JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name,
          cluster: {
            server: options.server,
            'certificate-authority-data': Buffer.from(options.caCertPem).toString('base64'),
          },
        },
      ],
      users: [{ name: 'admin', user: { token: options.token } }],
      contexts: [{ name, context: { cluster: name, user: 'admin' } }],
      'current-context': name,
    },
    null,
    2,
  );
}
