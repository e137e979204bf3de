import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { encryptionConfiguration } from '../../seed/agent/kube/control-plane-files.js';

const run = promisify(execFile);

export interface ClusterSecrets {
  caCert: string;
  servingCert: string;
  servingKey: string;
  /** Service-account token signing key pair (kube-apiserver verifies, kube-controller-manager signs). */
  serviceAccountKey: string;
  serviceAccountPub: string;
  /** Secrets at rest in its etcd are encrypted (aescbc), as a seed's must be: shoots' files are among them. */
  encryptionConfig: string;
  /** Static token file: one admin token in group system:masters (and the node's, with `node`). */
  tokenFile: string;
  token: string;
  /** With `node`: what a real node's kubelet and kube-proxy need. */
  node?: NodeSecrets;
}

export interface NodeSecrets {
  /** The kubelet's serving certificate (its name and address), which the API server verifies. */
  kubeletCert: string;
  kubeletKey: string;
  /** The API server's client certificate towards kubelets (system:masters: logs, exec, port-forward). */
  kubeletClientCert: string;
  kubeletClientKey: string;
  /** The kubelet's token: system:node:<name> in system:nodes (the Node authorizer). */
  kubeletToken: string;
  /** kube-proxy's token: system:kube-proxy (bound to system:node-proxier by the default policy). */
  kubeProxyToken: string;
}

/**
 * A throw-away PKI for one test API server, written into `dir`: a CA (openssl: node:crypto makes keys
 * but no certificates), a serving certificate for 127.0.0.1, `addresses` and the in-cluster names, a
 * service-account key pair and static tokens (admin; with `node`, its kubelet and kube-proxy, and the
 * kubelet's serving and the API server's kubelet-client certificates). Nothing here outlives the test run.
 */
export async function writeClusterSecrets(
  dir: string,
  options: { addresses?: string[]; node?: { name: string; address: string } } = {},
): Promise<ClusterSecrets> {
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
  /** A key and a certificate signed by the CA, with `extensions` (openssl x509v3 config lines). */
  const issue = async (name: string, subject: string, extensions: string[]) => {
    await run('openssl', ['req', ...ec, '-keyout', p(`${name}.key`), '-out', p(`${name}.csr`), '-subj', subject]);
    await writeFile(p(`${name}.ext`), `${extensions.join('\n')}\n`);
    await run('openssl', [
      'x509',
      '-req',
      '-in',
      p(`${name}.csr`),
      '-CA',
      p('ca.crt'),
      '-CAkey',
      p('ca.key'),
      '-CAcreateserial',
      '-out',
      p(`${name}.crt`),
      '-days',
      '30',
      '-extfile',
      p(`${name}.ext`),
    ]);
    return { cert: p(`${name}.crt`), key: p(`${name}.key`) };
  };
  const ips = ['127.0.0.1', '10.96.0.1', ...(options.addresses ?? [])].map((ip) => `IP:${ip}`);
  const san = `subjectAltName=${[...ips, 'DNS:localhost', 'DNS:kubernetes', 'DNS:kubernetes.default', 'DNS:kubernetes.default.svc'].join(',')}`;
  await issue('apiserver', '/CN=kube-apiserver', [san, 'extendedKeyUsage=serverAuth']);
  const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  await writeFile(p('sa.key'), sa.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  await writeFile(p('sa.pub'), sa.publicKey.export({ type: 'spki', format: 'pem' }));
  const token = randomBytes(24).toString('hex');
  const tokens = [`${token},admin,admin,"system:masters"`];
  let node: NodeSecrets | undefined;
  if (options.node) {
    const { name, address } = options.node;
    const kubelet = await issue('kubelet', `/CN=system:node:${name}`, [
      `subjectAltName=DNS:${name},IP:${address},IP:127.0.0.1`,
      'extendedKeyUsage=serverAuth',
    ]);
    const client = await issue('apiserver-kubelet-client', '/O=system:masters/CN=kube-apiserver-kubelet-client', [
      'extendedKeyUsage=clientAuth',
    ]);
    const kubeletToken = randomBytes(24).toString('hex');
    const kubeProxyToken = randomBytes(24).toString('hex');
    tokens.push(`${kubeletToken},system:node:${name},kubelet,"system:nodes"`);
    tokens.push(`${kubeProxyToken},system:kube-proxy,kube-proxy`);
    node = {
      kubeletCert: kubelet.cert,
      kubeletKey: kubelet.key,
      kubeletClientCert: client.cert,
      kubeletClientKey: client.key,
      kubeletToken,
      kubeProxyToken,
    };
  }
  await writeFile(p('tokens.csv'), `${tokens.join('\n')}\n`, { mode: 0o600 });
  await writeFile(
    p('encryption-config.yaml'),
    encryptionConfiguration({
      etcdEncryption: { provider: 'aescbc', keyName: 'test-seed', secret: randomBytes(32).toString('base64') },
    }),
    { mode: 0o600 },
  );
  return {
    caCert: p('ca.crt'),
    servingCert: p('apiserver.crt'),
    servingKey: p('apiserver.key'),
    serviceAccountKey: p('sa.key'),
    serviceAccountPub: p('sa.pub'),
    tokenFile: p('tokens.csv'),
    encryptionConfig: p('encryption-config.yaml'),
    token,
    ...(node ? { node } : {}),
  };
}

/** A kubeconfig (JSON is YAML) for `server` with a bearer token, trusting `caCert`. */
export function kubeconfigFor(options: {
  server: string;
  caCertPem: string;
  token: string;
  name?: string;
  user?: string;
}): string {
  const name = options.name ?? 'gardenless-test';
  const user = options.user ?? 'admin';
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
      users: [{ name: user, user: { token: options.token } }],
      contexts: [{ name, context: { cluster: name, user } }],
      'current-context': name,
    },
    null,
    2,
  );
}
