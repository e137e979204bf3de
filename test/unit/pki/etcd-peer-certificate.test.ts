import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { issueEtcdPeerCertificate } from '../../../core/pki/certificates.js';
import { generateShootSecrets } from '../../../core/pki/shoot-secrets.js';

const NOW = new Date();

describe("an etcd member's peer certificate", () => {
  it.each([
    {
      what: 'a member on loopback',
      peerUrls: ['https://127.0.0.1:2380'],
      dns: [],
      ips: ['127.0.0.1'],
    },
    {
      what: 'a pod under the etcd-peer Service, by name',
      peerUrls: ['https://etcd-main-0.etcd-peer.shoot--dev--web.svc:2380', 'https://etcd-main-0.etcd-peer:2380'],
      dns: ['etcd-main-0.etcd-peer.shoot--dev--web.svc', 'etcd-main-0.etcd-peer'],
      ips: [],
    },
    { what: 'an IPv6 address', peerUrls: ['https://[::1]:2380'], dns: [], ips: ['::1'] },
  ])('is for server and client, names the hosts of its peer URLs, from the peer CA: $what', async (c) => {
    // Prepare
    const secrets = await generateShootSecrets(NOW);
    const peerCA = secrets.etcdPeerCA!;

    // Act
    const issued = await issueEtcdPeerCertificate({
      ca: peerCA,
      member: 'etcd-main-0',
      peerUrls: c.peerUrls,
      now: NOW,
    });

    // Assess
    const node = new X509Certificate(issued.certificate);
    // serverAuth and clientAuth.
    expect(node.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    const names = (node.subjectAltName ?? '').split(', ');
    expect(names.filter((n) => n.startsWith('DNS:')).map((n) => n.slice(4))).toEqual(c.dns);
    expect(names.filter((n) => n.startsWith('IP Address:')).map((n) => n.slice(11).toLowerCase())).toEqual(
      c.ips.map((ip) => (ip === '::1' ? '0:0:0:0:0:0:0:1' : ip)),
    );
    expect(node.subject).toBe('CN=etcd-main-0');
    expect(node.checkIssued(new X509Certificate(peerCA.certificate))).toBe(true);
    expect(node.verify(new X509Certificate(peerCA.certificate).publicKey)).toBe(true);
    expect(node.checkIssued(new X509Certificate(secrets.clusterCA.certificate))).toBe(false);
    expect(node.ca).toBe(false);
  });

  it('is not from another shoot: its peer CA differs', async () => {
    const [a, b] = await Promise.all([generateShootSecrets(NOW), generateShootSecrets(NOW)]);
    const issued = await issueEtcdPeerCertificate({
      ca: b.etcdPeerCA!,
      member: 'etcd',
      peerUrls: ['https://127.0.0.1:2380'],
      now: NOW,
    });
    expect(
      new X509Certificate(issued.certificate).verify(new X509Certificate(a.etcdPeerCA!.certificate).publicKey),
    ).toBe(false);
  });
});
