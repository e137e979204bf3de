import { UnavailableError } from '../errors.js';
import { ShootStateConflictError } from './errors.js';
import {
  gardenContext,
  openSecrets,
  resealSecrets,
  sealSecrets,
  seedContext,
  type DataKeys,
  type SealedSecrets,
} from './sealed.js';
import type { ShootSecrets } from './secrets.js';
import type { ShootStateKey, ShootStateStore } from './store.js';
import { SHOOT_STATE_API_VERSION, type PackedShootState, type ShootRef } from './types.js';

export interface ShootSecretsKeeperOptions {
  store: ShootStateStore;
  keys: DataKeys;
  /** Makes a shoot's secrets (`generateShootSecrets` of core/pki). */
  generate: (now: Date) => Promise<ShootSecrets>;
  now?: () => Date;
}

/** Conditional saves that lose to a concurrent one are read again; past this many something keeps writing. */
const ATTEMPTS = 5;

/**
 * The garden's side of a shoot's secrets: made once (the first caller that finds none generates and saves
 * them conditionally; a concurrent one that loses reads the winner's), kept sealed in the ShootState, and
 * handed out either opened (to the garden's API, which signs kubeconfigs) or sealed again for one seed (in
 * the commands that start its control plane there).
 */
export class ShootSecretsKeeper {
  private readonly now: () => Date;

  constructor(private readonly options: ShootSecretsKeeperOptions) {
    this.now = options.now ?? (() => new Date());
  }

  /** The shoot's sealed secrets, generated and saved the first time. */
  async ensure(shoot: ShootRef): Promise<SealedSecrets> {
    const key = { project: shoot.project, name: shoot.name };
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const stored = await this.options.store.load(key);
      const kept = stored?.state.secrets;
      if (kept?.holds?.includes('etcdPeerCA')) return kept;
      const secrets = await sealSecrets(
        kept ? await this.withEtcdPeerCA(kept, shoot) : await this.options.generate(this.now()),
        this.options.keys,
        gardenContext(shoot.technicalID),
      );
      const state: PackedShootState = { ...(stored?.state ?? emptyShootState(shoot, this.now())), secrets };
      try {
        await this.options.store.save({ ...key, state, expectedVersion: stored?.version ?? 0 });
        return secrets;
      } catch (error) {
        if (!(error instanceof ShootStateConflictError)) throw error;
      }
    }
    throw new UnavailableError(`the ShootState of ${shoot.project}/${shoot.name} kept changing; try again`, {
      code: 'ShootStateBusy',
    });
  }

  /**
   * Secrets sealed before the etcd peer CA existed, with one added: the same conditional save as a first
   * generation makes it the shoot's one CA, whichever caller wins, so every seed of the shoot gets the same.
   * Its members trust each other from then on (docs/design.md section 14). A marker lost on its way (the
   * ciphertext holds the CA already) keeps the CA it holds.
   */
  private async withEtcdPeerCA(kept: SealedSecrets, shoot: ShootRef): Promise<ShootSecrets> {
    const opened = await openSecrets(kept, this.options.keys, gardenContext(shoot.technicalID));
    if (opened.etcdPeerCA) return opened;
    // A whole generation for one CA: a few milliseconds, once per shoot, and no second way to make one.
    const { etcdPeerCA } = await this.options.generate(this.now());
    return { ...opened, ...(etcdPeerCA ? { etcdPeerCA } : {}) };
  }

  /** The secrets in plain, for the garden itself (signing kubeconfigs with the client CA). */
  async open(shoot: ShootRef): Promise<ShootSecrets> {
    return openSecrets(await this.ensure(shoot), this.options.keys, gardenContext(shoot.technicalID));
  }

  /** A copy for `seed`: only that seed's agent can open it. */
  async forSeed(shoot: ShootRef, seed: string): Promise<SealedSecrets> {
    const id = shoot.technicalID;
    return resealSecrets(await this.ensure(shoot), this.options.keys, gardenContext(id), seedContext(id, seed));
  }
}

/**
 * Saves a ShootState that a seed collected (a migrate answer) without losing the garden's secrets: the
 * stored ones are kept, and whatever the document carried as secrets is dropped (a seed never sets them).
 */
export async function saveKeepingSecrets(
  store: ShootStateStore,
  key: ShootStateKey,
  state: PackedShootState,
): Promise<number> {
  const { secrets: _ignored, ...collected } = state;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const stored = await store.load(key);
    const kept = stored?.state.secrets;
    try {
      return await store.save({
        ...key,
        state: kept ? { ...collected, secrets: kept } : collected,
        expectedVersion: stored?.version ?? 0,
      });
    } catch (error) {
      if (!(error instanceof ShootStateConflictError)) throw error;
    }
  }
  throw new UnavailableError(`the ShootState of ${key.project}/${key.name} kept changing; try again`, {
    code: 'ShootStateBusy',
  });
}

/** A ShootState with no extension state yet: what a shoot has between its creation and its first migration. */
export function emptyShootState(shoot: ShootRef, now: Date): PackedShootState {
  return {
    apiVersion: SHOOT_STATE_API_VERSION,
    kind: 'ShootState',
    shoot: { project: shoot.project, name: shoot.name, technicalID: shoot.technicalID },
    extensions: [],
    collectedAt: now.toISOString(),
    collectedAfter: 'reconcile',
  };
}
