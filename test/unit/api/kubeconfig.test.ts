import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { seedBody, shootBody } from '../garden/builders.js';
import { api, CALLERS, type Api } from './events.js';

const SERVER = 'https://api.web.dev.shoots.gardenless.test';

/** A shoot placed on a seed whose API record names its serving plane (it advertises its API domain). */
async function servingShoot(a: Api, name = 'web'): Promise<void> {
  await a.service.putSeed('seed-a', seedBody());
  await a.service.putShoot('dev', name, shootBody({ spec: { seedName: 'seed-a', controlPlane: undefined } }));
  const shoot = (await a.repo.getShoot('dev', name))!;
  await a.repo.updateShoot(
    { ...shoot, status: { ...shoot.status, advertisedAddresses: [{ name: 'external', url: SERVER }] } },
    shoot.metadata.resourceVersion,
  );
}

interface Kubeconfig {
  clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string; 'proxy-url'?: string } }[];
  users: { name: string; user: { 'client-certificate-data': string; 'client-key-data': string } }[];
  'current-context': string;
}

function decoded(body: unknown): { config: Kubeconfig; cert: X509Certificate; expirationTimestamp: string } {
  const status = (body as { status: { kubeconfig: string; expirationTimestamp: string } }).status;
  const config = parse(Buffer.from(status.kubeconfig, 'base64').toString()) as Kubeconfig;
  const pem = Buffer.from(config.users[0]!.user['client-certificate-data'], 'base64').toString();
  return { config, cert: new X509Certificate(pem), expirationTimestamp: status.expirationTimestamp };
}

describe('POST /projects/{p}/shoots/{n}/adminkubeconfig and viewerkubeconfig', () => {
  it("issues the operator an admin kubeconfig: the API domain, the shoot's cluster CA, a client certificate in system:masters that expires as asked", async () => {
    // Prepare
    const a = api();
    await servingShoot(a);

    // Act
    const res = await a.send('POST', '/projects/dev/shoots/web/adminkubeconfig', {
      body: {
        apiVersion: 'authentication.gardener.cloud/v1alpha1',
        kind: 'AdminKubeconfigRequest',
        spec: { expirationSeconds: 600 },
      },
    });

    // Assess
    expect(res.status).toBe(201);
    const { config, cert, expirationTimestamp } = decoded(res.body);
    const secrets = await a.secrets.open({ project: 'dev', name: 'web', technicalID: 'shoot--dev--web' });
    expect(config.clusters[0]!.cluster.server).toBe(SERVER);
    expect(config.clusters[0]!.cluster['proxy-url']).toBeUndefined();
    expect(Buffer.from(config.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString()).toBe(
      secrets.clusterCA.certificate,
    );
    expect(config['current-context']).toBe('dev--web-external');
    expect(cert.checkIssued(new X509Certificate(secrets.clientCA.certificate))).toBe(true);
    expect(cert.subject).toBe(`CN=${CALLERS.operator}\nO=system:masters`);
    expect(new Date(cert.validTo).getTime()).toBe(a.clock.now().getTime() + 600_000);
    expect(expirationTimestamp).toBe(new Date(a.clock.now().getTime() + 600_000).toISOString());
    expect(res.body).toMatchObject({ kind: 'AdminKubeconfigRequest', spec: { expirationSeconds: 600 } });
  });

  it('issues a viewer a viewer kubeconfig, an hour by default, and refuses it the admin one', async () => {
    const a = api();
    await servingShoot(a);
    const viewer = await a.send('POST', '/projects/dev/shoots/web/viewerkubeconfig', {
      body: {},
      caller: CALLERS.viewer,
    });
    const admin = await a.send('POST', '/projects/dev/shoots/web/adminkubeconfig', {
      body: {},
      caller: CALLERS.viewer,
    });
    expect(viewer.status).toBe(201);
    const { cert } = decoded(viewer.body);
    expect(cert.subject).toBe(`CN=${CALLERS.viewer}\nO=gardener.cloud:system:viewers`);
    expect(new Date(cert.validTo).getTime()).toBe(a.clock.now().getTime() + 3_600_000);
    expect(admin.status).toBe(403);
  });

  it('refuses a seed agent either kubeconfig', async () => {
    const a = api();
    await servingShoot(a);
    for (const role of ['admin', 'viewer'])
      expect(
        (
          await a.send('POST', `/projects/dev/shoots/web/${role}kubeconfig`, {
            body: {},
            caller: CALLERS.agent('seed-a'),
          })
        ).status,
      ).toBe(403);
  });

  it.each([
    [{ spec: { expirationSeconds: 599 } }, 'spec.expirationSeconds', /at least 600/],
    [{ spec: { expirationSeconds: 86_401 } }, 'spec.expirationSeconds', /at most 86400/],
    [{ spec: { expirationSeconds: '1h' } }, 'spec.expirationSeconds', /number/],
    [{ spec: { expiration: 600 } }, 'spec.expiration', /expiration/],
    [{ kind: 'ViewerKubeconfigRequest' }, 'kind', /AdminKubeconfigRequest/],
  ])('answers %j with 400 naming %s', async (body, field, message) => {
    const a = api();
    await servingShoot(a);
    const res = await a.send('POST', '/projects/dev/shoots/web/adminkubeconfig', { body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ field });
    expect((res.body as { message: string }).message).toMatch(message);
  });

  it('answers 404 for a shoot that does not exist and 409 for one that has not served yet', async () => {
    const a = api();
    await a.service.putSeed('seed-a', seedBody());
    await a.service.putShoot('dev', 'new', shootBody({ spec: { seedName: 'seed-a', controlPlane: undefined } }));
    const missing = await a.send('POST', '/projects/dev/shoots/none/adminkubeconfig', { body: {} });
    const notServing = await a.send('POST', '/projects/dev/shoots/new/adminkubeconfig', { body: {} });
    expect(missing.status).toBe(404);
    expect(notServing.status).toBe(409);
    expect(notServing.body).toMatchObject({ code: 'NoAdvertisedAddress' });
    expect(a.unexpected).toEqual([]);
  });
});
