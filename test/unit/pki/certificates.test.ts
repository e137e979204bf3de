import { createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createPublicKey, X509Certificate, createSign, createVerify } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  certificateNotAfter,
  issueCertificate,
  newCertificateAuthority,
  newSigningKeyPair,
} from '../../../core/pki/certificates.js';

const NOW = new Date();
const servers: { close: () => void }[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

describe('a shoot PKI on WebCrypto', () => {
  it('makes a CA that signs a server and a client certificate a real TLS handshake accepts both ways', async () => {
    // Prepare
    const clusterCA = await newCertificateAuthority({ commonName: 'kubernetes', now: NOW });
    const clientCA = await newCertificateAuthority({ commonName: 'kubernetes-client', now: NOW });
    const server = await issueCertificate({
      ca: clusterCA,
      commonName: 'kube-apiserver',
      usage: 'server',
      dnsNames: ['api.web.dev.example.test'],
      ipAddresses: ['127.0.0.1'],
      now: NOW,
      validitySeconds: 3600,
    });
    const client = await issueCertificate({
      ca: clientCA,
      commonName: 'alice',
      organizations: ['system:masters'],
      usage: 'client',
      now: NOW,
      validitySeconds: 600,
    });

    // Act: a server that demands a client certificate from the client CA, reached under its DNS name.
    const https = createServer(
      { cert: server.certificate, key: server.privateKey, ca: clientCA.certificate, requestCert: true },
      (req, res) => {
        const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate();
        res.end(JSON.stringify({ cn: peer.subject.CN, o: peer.subject.O }));
      },
    );
    servers.push(https);
    await new Promise<void>((r) => https.listen(0, '127.0.0.1', () => r()));
    const port = (https.address() as AddressInfo).port;
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          servername: 'api.web.dev.example.test',
          ca: clusterCA.certificate,
          cert: client.certificate,
          key: client.privateKey,
          path: '/',
        },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      req.end();
    });

    // Assess
    expect(JSON.parse(body)).toEqual({ cn: 'alice', o: 'system:masters' });
    const cert = new X509Certificate(client.certificate);
    expect(cert.checkIssued(new X509Certificate(clientCA.certificate))).toBe(true);
    expect(cert.checkIssued(new X509Certificate(clusterCA.certificate))).toBe(false);
    expect(new X509Certificate(clusterCA.certificate).ca).toBe(true);
    expect(cert.ca).toBe(false);
  });

  it('issues a certificate that expires after the validity asked for, valid from a minute before now', async () => {
    const ca = await newCertificateAuthority({ commonName: 'kubernetes-client', now: NOW });
    const cert = await issueCertificate({ ca, commonName: 'v', usage: 'client', now: NOW, validitySeconds: 1800 });
    expect(certificateNotAfter(cert.certificate).getTime()).toBe(Math.floor(NOW.getTime() / 1000) * 1000 + 1_800_000);
    expect(new Date(new X509Certificate(cert.certificate).validFrom).getTime()).toBeLessThanOrEqual(
      NOW.getTime() - 59_000,
    );
  });

  it('makes a signing key pair whose public key verifies what its private key signs', async () => {
    const pair = await newSigningKeyPair();
    const signature = createSign('sha256').update('token').sign(pair.privateKey);
    expect(createVerify('sha256').update('token').verify(createPublicKey(pair.publicKey), signature)).toBe(true);
    expect(pair.privateKey).toContain('BEGIN PRIVATE KEY');
  });
});
