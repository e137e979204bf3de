import { describe, expect, it } from 'vitest';
import { generateShootSecrets } from '../../../core/pki/shoot-secrets.js';
import {
  FailingDataKeys,
  gardenContext,
  InMemoryShootStateStore,
  LocalDataKeys,
  openSecrets,
  resealSecrets,
  saveKeepingSecrets,
  sealSecrets,
  SecretsUnavailableError,
  seedContext,
  shootSecretsSchema,
  ShootSecretsKeeper,
  emptyShootState,
  type ShootSecrets,
  type ShootStateStore,
} from '../../../core/shootstate/index.js';

const NOW = new Date('2025-03-01T00:00:00Z');
const shoot = { project: 'dev', name: 'web', technicalID: 'shoot--dev--web' };
const other = { project: 'dev', name: 'api', technicalID: 'shoot--dev--api' };

let cached: ShootSecrets | undefined;
async function secrets(): Promise<ShootSecrets> {
  cached ??= await generateShootSecrets(NOW);
  return cached;
}

describe("a shoot's secrets", () => {
  it('are generated whole: three CAs, a ServiceAccount key pair and a 32-byte aescbc key', async () => {
    const s = await secrets();
    expect(shootSecretsSchema.parse(s)).toEqual(s);
    expect(s.etcdPeerCA?.certificate).not.toEqual(s.clusterCA.certificate);
    expect(Buffer.from(s.etcdEncryption.secret, 'base64')).toHaveLength(32);
    expect(s.clusterCA.certificate).not.toEqual(s.clientCA.certificate);
  });

  it('seal and open under the same context, and only under it', async () => {
    // Prepare
    const keys = new LocalDataKeys();
    const sealed = await sealSecrets(await secrets(), keys, gardenContext(shoot.technicalID));

    // Act / Assess
    expect(await openSecrets(sealed, keys, gardenContext(shoot.technicalID))).toEqual(await secrets());
    expect(JSON.stringify(sealed)).not.toContain('PRIVATE KEY');
    await expect(openSecrets(sealed, keys, seedContext(shoot.technicalID, 'aws-eu1'))).rejects.toThrow(
      SecretsUnavailableError,
    );
    await expect(openSecrets(sealed, keys, gardenContext(other.technicalID))).rejects.toThrow(/not for/);
  });

  it('resealed for a seed, open for that seed only: a document relabelled for another fails', async () => {
    // Prepare
    const keys = new LocalDataKeys();
    const stored = await sealSecrets(await secrets(), keys, gardenContext(shoot.technicalID));

    // Act
    const forSeed = await resealSecrets(
      stored,
      keys,
      gardenContext(shoot.technicalID),
      seedContext(shoot.technicalID, 'eu1'),
    );

    // Assess
    expect(forSeed.ciphertext).toBe(stored.ciphertext);
    expect(await openSecrets(forSeed, keys, seedContext(shoot.technicalID, 'eu1'))).toEqual(await secrets());
    const relabelled = { ...forSeed, context: seedContext(shoot.technicalID, 'eu2') };
    await expect(openSecrets(relabelled, keys, seedContext(shoot.technicalID, 'eu2'))).rejects.toThrow(
      SecretsUnavailableError,
    );
    await expect(
      resealSecrets(stored, keys, gardenContext(shoot.technicalID), seedContext(other.technicalID, 'eu1')),
    ).rejects.toThrow(/not resealed for another/);
  });

  it('fail to open when a byte of the ciphertext changed', async () => {
    const keys = new LocalDataKeys();
    const sealed = await sealSecrets(await secrets(), keys, gardenContext(shoot.technicalID));
    const bytes = Buffer.from(sealed.ciphertext, 'base64');
    bytes[5] = bytes[5]! ^ 1;
    await expect(
      openSecrets({ ...sealed, ciphertext: bytes.toString('base64') }, keys, gardenContext(shoot.technicalID)),
    ).rejects.toThrow(/altered/);
  });

  it('turn a failing key service into SecretsUnavailable', async () => {
    await expect(sealSecrets(await secrets(), new FailingDataKeys(), gardenContext('x'))).rejects.toThrow(
      SecretsUnavailableError,
    );
  });
});

describe('ShootSecretsKeeper', () => {
  function keeper(store: ShootStateStore = new InMemoryShootStateStore(), keys = new LocalDataKeys()) {
    let generated = 0;
    const k = new ShootSecretsKeeper({
      store,
      keys,
      generate: async () => {
        generated += 1;
        return secrets();
      },
      now: () => NOW,
    });
    return { k, store, keys, generated: () => generated };
  }

  it('generates once: later calls, and two at once, get the same sealed secrets', async () => {
    // Prepare
    const { k, store, generated } = keeper();

    // Act
    const [a, b] = await Promise.all([k.ensure(shoot), k.ensure(shoot)]);
    const c = await k.ensure(shoot);

    // Assess
    expect(a).toEqual(b);
    expect(c).toEqual(a);
    expect(generated()).toBeLessThanOrEqual(2);
    expect((await store.load(shoot))?.state.secrets).toEqual(a);
  });

  it('adds the secrets to a ShootState that exists, keeping its extensions', async () => {
    const store = new InMemoryShootStateStore();
    const state = { ...emptyShootState(shoot, NOW), extensions: [{ kind: 'Infrastructure' as const, name: 'web' }] };
    await store.save({ ...shoot, state });
    const { k } = keeper(store);
    await k.ensure(shoot);
    const stored = await store.load(shoot);
    expect(stored?.state.extensions).toEqual(state.extensions);
    expect(stored?.state.secrets).toBeDefined();
  });

  it('hands a seed a copy only it opens, and the garden the secrets in plain', async () => {
    const { k, keys } = keeper();
    const sealed = await k.forSeed(shoot, 'eu1');
    expect(sealed.context).toEqual(seedContext(shoot.technicalID, 'eu1'));
    expect(await openSecrets(sealed, keys, seedContext(shoot.technicalID, 'eu1'))).toEqual(await k.open(shoot));
  });

  it("keeps the garden's secrets when a seed's collected ShootState is saved, and drops any the seed sent", async () => {
    // Prepare
    const { k, store, keys } = keeper();
    const kept = await k.ensure(shoot);
    const forged = await sealSecrets(await generateShootSecrets(NOW), keys, gardenContext(shoot.technicalID));
    const collected = {
      ...emptyShootState(shoot, NOW),
      collectedAfter: 'migrate' as const,
      extensions: [{ kind: 'Worker' as const, name: 'web' }],
      secrets: forged,
    };

    // Act
    await saveKeepingSecrets(store, shoot, collected);

    // Assess
    const stored = await store.load(shoot);
    expect(stored?.state.secrets).toEqual(kept);
    expect(stored?.state.extensions).toEqual(collected.extensions);
    expect(stored?.state.collectedAfter).toBe('migrate');
  });

  it('adds the etcd peer CA once to secrets sealed before it, the same for every caller', async () => {
    // Prepare: a shoot whose secrets were sealed before the peer CA existed.
    const { k, store, keys } = keeper();
    const { etcdPeerCA: _none, ...before } = await generateShootSecrets(NOW);
    const legacy = await sealSecrets(before, keys, gardenContext(shoot.technicalID));
    expect(legacy.holds).toBeUndefined();
    await store.save({ ...shoot, state: { ...emptyShootState(shoot, NOW), secrets: legacy } });

    // Act: two seeds' commands at once, then a third.
    const [a, b] = await Promise.all([k.forSeed(shoot, 'eu1'), k.forSeed(shoot, 'eu2')]);
    const c = await k.forSeed(shoot, 'eu3');

    // Assess
    const opened = await Promise.all(
      [a, b, c].map((sealed, i) => openSecrets(sealed, keys, seedContext(shoot.technicalID, `eu${i + 1}`))),
    );
    expect(opened[0]?.etcdPeerCA).toBeDefined();
    expect(opened[1]?.etcdPeerCA).toEqual(opened[0]?.etcdPeerCA);
    expect(opened[2]?.etcdPeerCA).toEqual(opened[0]?.etcdPeerCA);
    expect({ ...opened[0], etcdPeerCA: undefined }).toEqual({ ...before, etcdPeerCA: undefined });
    expect((await store.load(shoot))?.state.secrets?.holds).toEqual(['etcdPeerCA']);
  });

  it('saves a collected ShootState without secrets when the garden has none yet', async () => {
    const store = new InMemoryShootStateStore();
    await saveKeepingSecrets(store, shoot, { ...emptyShootState(shoot, NOW), secrets: await keeper().k.ensure(shoot) });
    expect((await store.load(shoot))?.state.secrets).toBeUndefined();
  });
});
