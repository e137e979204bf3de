import { join } from 'node:path';
import { stringify } from 'yaml';
import { issueCertificate } from '../../../core/pki/certificates.js';
import type { ShootSecrets } from '../../../core/shootstate/secrets.js';
import { writeSecretFile } from '../secret-files.js';

/** The names a shoot's kube-apiserver serving certificate answers to, besides the API domain. */
const IN_CLUSTER_NAMES = [
  'kubernetes',
  'kubernetes.default',
  'kubernetes.default.svc',
  'kubernetes.default.svc.cluster.local',
  'localhost',
];
/** The service range of every local control plane (its first address is the `kubernetes` Service's). */
export const SERVICE_CIDR = '10.0.0.0/24';
const KUBERNETES_SERVICE_IP = '10.0.0.1';
/** How long the certificates a seed makes for its own components are valid; they are made again at every start. */
const COMPONENT_CERT_SECONDS = 365 * 86_400;

export interface ControlPlaneFiles {
  dir: string;
  clusterCA: string;
  clientCA: string;
  apiServerCert: string;
  apiServerKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  encryptionConfig: string;
  controllerManagerKubeconfig: string;
  schedulerKubeconfig: string;
  /** The agent's own access (system:masters): it binds the viewers' group, and nothing else. */
  agentKubeconfig: string;
  /** The same access in memory, for the agent's requests. */
  agent: { ca: string; certificate: string; privateKey: string };
}

/**
 * The files a local control plane's components read, made from the shoot's secrets at every start (mode
 * 0600 in `<plane>/pki/components/`): the serving certificate for the API domain and the addresses this seed
 * reaches it on, each component's client certificate and kubeconfig, the ServiceAccount key pair and the
 * EncryptionConfiguration. The CAs and keys come from the secrets, so every seed that ever runs the shoot
 * serves the same identity.
 */
export async function writeControlPlaneFiles(options: {
  dir: string;
  secrets: ShootSecrets;
  apiDomain: string | undefined;
  /** Where this seed's clients reach the kube-apiserver: its internal address and the load balancer. */
  addresses: readonly string[];
  /** The kube-apiserver's internal URL, which the components and the agent use. */
  internalUrl: string;
  now: Date;
}): Promise<ControlPlaneFiles> {
  const { dir, secrets, now } = options;
  const path = (name: string) => join(dir, name);
  const files: ControlPlaneFiles = {
    dir,
    clusterCA: path('ca.crt'),
    clientCA: path('client-ca.crt'),
    apiServerCert: path('apiserver.crt'),
    apiServerKey: path('apiserver.key'),
    serviceAccountKey: path('sa.key'),
    serviceAccountPub: path('sa.pub'),
    encryptionConfig: path('encryption-config.yaml'),
    controllerManagerKubeconfig: path('kube-controller-manager.kubeconfig'),
    schedulerKubeconfig: path('kube-scheduler.kubeconfig'),
    agentKubeconfig: path('agent.kubeconfig'),
    agent: { ca: secrets.clusterCA.certificate, certificate: '', privateKey: '' },
  };
  const [serving, controllerManager, scheduler, agent] = await Promise.all([
    issueCertificate({
      ca: secrets.clusterCA,
      commonName: 'kube-apiserver',
      usage: 'server',
      dnsNames: [...(options.apiDomain ? [options.apiDomain] : []), ...IN_CLUSTER_NAMES],
      ipAddresses: [...new Set([...options.addresses, KUBERNETES_SERVICE_IP])],
      now,
      validitySeconds: COMPONENT_CERT_SECONDS,
    }),
    client(secrets, 'system:kube-controller-manager', [], now),
    client(secrets, 'system:kube-scheduler', [], now),
    client(secrets, 'gardenless:seed-agent', ['system:masters'], now),
  ]);
  writeSecretFile(files.clusterCA, secrets.clusterCA.certificate);
  writeSecretFile(files.clientCA, secrets.clientCA.certificate);
  writeSecretFile(files.apiServerCert, serving.certificate);
  writeSecretFile(files.apiServerKey, serving.privateKey);
  writeSecretFile(files.serviceAccountKey, secrets.serviceAccountKey.privateKey);
  writeSecretFile(files.serviceAccountPub, secrets.serviceAccountKey.publicKey);
  writeSecretFile(files.encryptionConfig, encryptionConfiguration(secrets));
  const kubeconfig = (user: string, cert: { certificate: string; privateKey: string }) =>
    componentKubeconfig({ server: options.internalUrl, ca: secrets.clusterCA.certificate, user, cert });
  writeSecretFile(files.controllerManagerKubeconfig, kubeconfig('kube-controller-manager', controllerManager));
  writeSecretFile(files.schedulerKubeconfig, kubeconfig('kube-scheduler', scheduler));
  writeSecretFile(files.agentKubeconfig, kubeconfig('gardenless-seed-agent', agent));
  return { ...files, agent: { ca: secrets.clusterCA.certificate, ...agent } };
}

function client(secrets: ShootSecrets, commonName: string, organizations: string[], now: Date) {
  return issueCertificate({
    ca: secrets.clientCA,
    commonName,
    organizations,
    usage: 'client',
    now,
    validitySeconds: COMPONENT_CERT_SECONDS,
  });
}

/** Secrets encrypted at rest with the shoot's aescbc key; `identity` last, so that anything written before still reads. */
export function encryptionConfiguration(secrets: Pick<ShootSecrets, 'etcdEncryption'>): string {
  return stringify({
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'EncryptionConfiguration',
    resources: [
      {
        resources: ['secrets'],
        providers: [
          {
            aescbc: {
              keys: [{ name: secrets.etcdEncryption.keyName, secret: secrets.etcdEncryption.secret }],
            },
          },
          { identity: {} },
        ],
      },
    ],
  });
}

function componentKubeconfig(input: {
  server: string;
  ca: string;
  user: string;
  cert: { certificate: string; privateKey: string };
}): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'shoot',
        // The internal address is an IP: the certificate is checked against the in-cluster name instead.
        cluster: { server: input.server, 'certificate-authority-data': b64(input.ca), 'tls-server-name': 'kubernetes' },
      },
    ],
    contexts: [{ name: 'shoot', context: { cluster: 'shoot', user: input.user } }],
    'current-context': 'shoot',
    users: [
      {
        name: input.user,
        user: {
          'client-certificate-data': b64(input.cert.certificate),
          'client-key-data': b64(input.cert.privateKey),
        },
      },
    ],
  });
}
