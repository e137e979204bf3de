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

/** Every file a shoot's control-plane components read, by what it is, and its name in their directory. */
export const CONTROL_PLANE_FILES = {
  clusterCA: 'ca.crt',
  clientCA: 'client-ca.crt',
  apiServerCert: 'apiserver.crt',
  apiServerKey: 'apiserver.key',
  serviceAccountKey: 'sa.key',
  serviceAccountPub: 'sa.pub',
  encryptionConfig: 'encryption-config.yaml',
  controllerManagerKubeconfig: 'kube-controller-manager.kubeconfig',
  schedulerKubeconfig: 'kube-scheduler.kubeconfig',
  /** The agent's own access (system:masters): it binds the viewers' group, and nothing else. */
  agentKubeconfig: 'agent.kubeconfig',
} as const;
export type ControlPlaneFile = keyof typeof CONTROL_PLANE_FILES;
/** Where each file is, for the components' flags (a directory on this machine, or a pod's Secret volume). */
export type ControlPlanePaths = Record<ControlPlaneFile, string>;

export function controlPlanePaths(dir: string): ControlPlanePaths {
  return Object.fromEntries(
    Object.entries(CONTROL_PLANE_FILES).map(([file, name]) => [file, join(dir, name)]),
  ) as ControlPlanePaths;
}

export interface ControlPlaneFilesInput {
  secrets: ShootSecrets;
  apiDomain: string | undefined;
  /** Where this seed's clients reach the kube-apiserver: its internal address and the load balancer. */
  addresses: readonly string[];
  /** The kube-apiserver's internal URL, which the components and the agent use. */
  internalUrl: string;
  now: Date;
}

export interface ControlPlaneFileContents {
  contents: Record<ControlPlaneFile, string>;
  /** The agent's access in memory, for its requests. */
  agent: { ca: string; certificate: string; privateKey: string };
}

/**
 * The files a shoot's control-plane components read, made from its secrets: the serving certificate for
 * the API domain and the addresses this seed reaches it on, each component's client certificate and
 * kubeconfig, the ServiceAccount key pair and the EncryptionConfiguration. The CAs and keys come from the
 * secrets, so every seed that ever runs the shoot serves the same identity; the CAs' private keys are in
 * none of the files.
 */
export async function controlPlaneFileContents(input: ControlPlaneFilesInput): Promise<ControlPlaneFileContents> {
  const { secrets, now } = input;
  const [serving, controllerManager, scheduler, agent] = await Promise.all([
    issueCertificate({
      ca: secrets.clusterCA,
      commonName: 'kube-apiserver',
      usage: 'server',
      dnsNames: [...(input.apiDomain ? [input.apiDomain] : []), ...IN_CLUSTER_NAMES],
      ipAddresses: [...new Set([...input.addresses, KUBERNETES_SERVICE_IP])],
      now,
      validitySeconds: COMPONENT_CERT_SECONDS,
    }),
    client(secrets, 'system:kube-controller-manager', [], now),
    client(secrets, 'system:kube-scheduler', [], now),
    agentAccessOf(secrets, now),
  ]);
  const kubeconfig = (user: string, cert: { certificate: string; privateKey: string }) =>
    componentKubeconfig({ server: input.internalUrl, ca: secrets.clusterCA.certificate, user, cert });
  return {
    contents: {
      clusterCA: secrets.clusterCA.certificate,
      clientCA: secrets.clientCA.certificate,
      apiServerCert: serving.certificate,
      apiServerKey: serving.privateKey,
      serviceAccountKey: secrets.serviceAccountKey.privateKey,
      serviceAccountPub: secrets.serviceAccountKey.publicKey,
      encryptionConfig: encryptionConfiguration(secrets),
      controllerManagerKubeconfig: kubeconfig('kube-controller-manager', controllerManager),
      schedulerKubeconfig: kubeconfig('kube-scheduler', scheduler),
      agentKubeconfig: kubeconfig('gardenless-seed-agent', agent),
    },
    agent,
  };
}

/** The agent's own access to a shoot's kube-apiserver (system:masters), made from the shoot's secrets. */
export async function agentAccessOf(secrets: ShootSecrets, now: Date): Promise<ControlPlaneFileContents['agent']> {
  const cert = await client(secrets, 'gardenless:seed-agent', ['system:masters'], now);
  return { ca: secrets.clusterCA.certificate, certificate: cert.certificate, privateKey: cert.privateKey };
}

export interface ControlPlaneFiles extends ControlPlanePaths {
  dir: string;
  agent: ControlPlaneFileContents['agent'];
}

/** The files of a control plane on this machine, made at every start: mode 0600 in `dir` (kept 0700). */
export async function writeControlPlaneFiles(
  input: ControlPlaneFilesInput & { dir: string },
): Promise<ControlPlaneFiles> {
  const { contents, agent } = await controlPlaneFileContents(input);
  const paths = controlPlanePaths(input.dir);
  for (const file of Object.keys(CONTROL_PLANE_FILES) as ControlPlaneFile[])
    writeSecretFile(paths[file], contents[file]);
  return { ...paths, dir: input.dir, agent };
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
