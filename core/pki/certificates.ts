// tsyringe (under @peculiar/x509) needs the Reflect metadata API before it loads.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

/**
 * X.509 for a shoot's PKI, on WebCrypto: every key is ECDSA P-256 (what kube-apiserver, client-go and
 * ServiceAccount tokens (ES256) all take, and a key in milliseconds where RSA takes tens), every private
 * key PKCS#8 PEM, every certificate PEM.
 */
const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING = { ...EC, hash: 'SHA-256' } as const;
/** A certificate is valid from a minute before it was made: a client whose clock is a little behind still takes it. */
const BACKDATE_MS = 60_000;

/** A certificate with its private key, both PEM. */
export interface CertificateAndKey {
  certificate: string;
  privateKey: string;
}

const EXTENDED_USAGES: Record<CertificateUsage, x509.ExtendedKeyUsage[]> = {
  client: [x509.ExtendedKeyUsage.clientAuth],
  server: [x509.ExtendedKeyUsage.serverAuth],
  peer: [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth],
};

/** A signing key pair (ServiceAccount tokens): PKCS#8 and SPKI PEM. */
export interface SigningKeyPair {
  privateKey: string;
  publicKey: string;
}

/** `peer`: both, for an etcd member, which serves its peers and connects to them with one certificate. */
export type CertificateUsage = 'client' | 'server' | 'peer';

export interface IssueOptions {
  ca: CertificateAndKey;
  commonName: string;
  /** The subject's O entries: Kubernetes reads them as the user's groups. */
  organizations?: readonly string[];
  usage: CertificateUsage;
  /** Subject alternative names of a server (or peer) certificate. */
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
  now: Date;
  validitySeconds: number;
}

/** A self-signed certificate authority (Gardener's `ca` and `ca-client` are ten years). */
export async function newCertificateAuthority(options: {
  commonName: string;
  now: Date;
  validityDays?: number;
}): Promise<CertificateAndKey> {
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: [{ CN: [options.commonName] }],
    notBefore: new Date(options.now.getTime() - BACKDATE_MS),
    notAfter: new Date(options.now.getTime() + (options.validityDays ?? 3650) * 86_400_000),
    keys,
    signingAlgorithm: SIGNING,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certificate: certificate.toString('pem'), privateKey: await exportPrivateKey(keys.privateKey) };
}

/** A certificate signed by `ca`, for a client (its CN the user, its O the groups) or a server (its names). */
export async function issueCertificate(options: IssueOptions): Promise<CertificateAndKey> {
  const caCert = new x509.X509Certificate(options.ca.certificate);
  const caKey = await importPrivateKey(options.ca.privateKey);
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const names = [
    ...(options.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(options.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: [{ CN: [options.commonName] }, ...(options.organizations ?? []).map((o) => ({ O: [o] }))],
    issuer: caCert.subject,
    notBefore: new Date(options.now.getTime() - BACKDATE_MS),
    notAfter: new Date(options.now.getTime() + options.validitySeconds * 1000),
    publicKey: keys.publicKey,
    signingKey: caKey,
    signingAlgorithm: SIGNING,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension(EXTENDED_USAGES[options.usage], false),
      await x509.AuthorityKeyIdentifierExtension.create(caCert, false),
      ...(names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names, false)] : []),
    ],
  });
  return { certificate: certificate.toString('pem'), privateKey: await exportPrivateKey(keys.privateKey) };
}

/** How long a seed's certificates for an etcd member are valid; they are made again at every start. */
const ETCD_PEER_CERT_SECONDS = 365 * 86_400;

/**
 * An etcd member's peer certificate from the shoot's etcd peer CA: the member serves its peers and
 * connects to them with it, so it is for server and client, and names every host of its peer URLs
 * (an address as an IP entry, a name as a DNS one), which is what its peers check it against.
 */
export function issueEtcdPeerCertificate(options: {
  ca: CertificateAndKey;
  member: string;
  peerUrls: readonly string[];
  now: Date;
}): Promise<CertificateAndKey> {
  const hosts = [...new Set(options.peerUrls.map((url) => new URL(url).hostname.replace(/^\[|\]$/g, '')))];
  return issueCertificate({
    ca: options.ca,
    commonName: options.member,
    usage: 'peer',
    dnsNames: hosts.filter((h) => isIP(h) === 0),
    ipAddresses: hosts.filter((h) => isIP(h) !== 0),
    now: options.now,
    validitySeconds: ETCD_PEER_CERT_SECONDS,
  });
}

/** A key pair that signs and verifies (kube-apiserver's ServiceAccount token issuer). */
export async function newSigningKeyPair(): Promise<SigningKeyPair> {
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const spki = Buffer.from(await webcrypto.subtle.exportKey('spki', keys.publicKey));
  return { privateKey: await exportPrivateKey(keys.privateKey), publicKey: pem('PUBLIC KEY', spki) };
}

/** When a certificate stops being valid. */
export function certificateNotAfter(certificatePem: string): Date {
  return new x509.X509Certificate(certificatePem).notAfter;
}

async function exportPrivateKey(key: CryptoKey): Promise<string> {
  return pem('PRIVATE KEY', Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key)));
}

async function importPrivateKey(privateKeyPem: string): Promise<CryptoKey> {
  const der = Buffer.from(
    privateKeyPem.replace(/-----(BEGIN|END) PRIVATE KEY-----/g, '').replace(/\s+/g, ''),
    'base64',
  );
  return webcrypto.subtle.importKey('pkcs8', der, EC, false, ['sign']);
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/** 16 random bytes, the first bit cleared: a positive serial of at most 20 octets (RFC 5280). */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  return bytes.toString('hex');
}
