import { CreateRoleCommand, IAMClient } from '@aws-sdk/client-iam';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { beforeAll, describe, expect, it } from 'vitest';
import { GardenClient } from '../../adapters/http/garden-client.js';
import { fixture } from '../../harness/fixtures/index.js';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';

const garden = testGarden();
const { deployment, aws } = garden;

/** A client of the API with the credentials of a session of `roleName`, as an agent or a viewer would get them. */
async function clientAs(roleName: string, create: boolean): Promise<GardenClient> {
  if (create) {
    await new IAMClient(aws)
      .send(
        new CreateRoleCommand({
          RoleName: roleName,
          AssumeRolePolicyDocument: JSON.stringify({
            Version: '2012-10-17',
            Statement: [
              {
                Effect: 'Allow',
                Principal: { AWS: 'arn:aws:iam::000000000000:root' },
                Action: ['sts:AssumeRole', 'sts:TagSession'],
              },
            ],
          }),
          Tags: [{ Key: 'gardenless-seed', Value: roleName.replace(/^gl-seed-/, '') }],
        }),
      )
      .catch((error: Error) => {
        if (error.name !== 'EntityAlreadyExistsException') throw error;
      });
  }
  const session = await new STSClient(aws).send(
    new AssumeRoleCommand({ RoleArn: `arn:aws:iam::000000000000:role/${roleName}`, RoleSessionName: 'it' }),
  );
  const c = session.Credentials!;
  return new GardenClient({
    apiUrl: deployment.apiUrl,
    region: deployment.region,
    timeoutMs: 120_000,
    credentials: async () => ({
      accessKeyId: c.AccessKeyId!,
      secretAccessKey: c.SecretAccessKey!,
      sessionToken: c.SessionToken!,
    }),
  });
}

function seed(name: string) {
  const s = fixture('seed-aws-eu1');
  s.metadata.name = name;
  return s;
}

describe('actors on the deployed stack (the caller API Gateway authenticated, checked by the handler)', () => {
  let agent: GardenClient;
  let viewer: GardenClient;

  beforeAll(async () => {
    await resetGardenState(garden);
    for (const n of ['act-a', 'act-b'])
      expect((await garden.setup.request('PUT', `/seeds/${n}`, { body: seed(n) })).status).toBe(201);
    const shoot = fixture('shoot-dev-api1');
    shoot.metadata.name = 'on-a';
    shoot.spec.seedName = 'act-a';
    expect((await garden.setup.request('PUT', '/projects/dev/shoots/on-a', { body: shoot })).status).toBe(201);
    agent = await clientAs('gl-seed-act-a', true);
    viewer = await clientAs(`${deployment.stackName}-viewer`, false);
  });

  it('lets the agent of act-a heartbeat and read its own seed and the shoot placed on it', async () => {
    expect(
      (
        await agent.request('POST', '/seeds/act-a/heartbeat', {
          body: { conditions: [{ type: 'GardenletReady', status: 'True' }] },
        })
      ).status,
    ).toBe(200);
    expect((await agent.request('GET', '/seeds/act-a')).status).toBe(200);
    expect((await agent.request('GET', '/projects/dev/shoots/on-a')).status).toBe(200);
  });

  it.each<[string, string, unknown?]>([
    ['POST', '/seeds/act-b/heartbeat', { conditions: [] }],
    ['GET', '/seeds/act-b'],
    ['GET', '/seeds'],
    ['DELETE', '/projects/dev/shoots/on-a'],
    ['POST', '/projects/dev/shoots/on-a/migrate', {}],
    ['PUT', '/seeds/act-a', seed('act-a')],
  ])('refuses the agent of act-a %s %s with 403', async (method, path, body) => {
    const res = await agent.request(method, path, body === undefined ? {} : { body });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'Forbidden' });
  });

  it('lets the viewer read and refuses its writes with 403', async () => {
    expect((await viewer.request('GET', '/seeds')).status).toBe(200);
    expect((await viewer.request('DELETE', '/projects/dev/shoots/on-a')).status).toBe(403);
    expect((await garden.api.request('GET', '/projects/dev/shoots/on-a')).status).toBe(200);
  });
});
