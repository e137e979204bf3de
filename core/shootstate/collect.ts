import { annotate, extensionId, newExtension, type ExtensionResource } from '../extensions/resource.js';
import { ShootStateCollectError } from './errors.js';
import { SHOOT_STATE_API_VERSION, type ShootRef, type ShootState } from './types.js';

export interface CollectOptions {
  shoot: ShootRef;
  resources: readonly ExtensionResource[];
  now: Date;
  /** The seed the resources were read on. */
  seed?: string;
  /**
   * `migrate` (the default): every resource must have been migrated successfully, or the state may be
   * stale; `reconcile`: collect what the last reconciles saved (the ShootState kept up to date in steady
   * state, which the bad path restores from).
   */
  after?: 'migrate' | 'reconcile';
}

/**
 * The ShootState of a shoot from its extension resources: kind, name, purpose, `status.state` and
 * `status.resources` of each. Every resource is listed, stateless ones too, so that the destination
 * knows what to recreate. Sorted by identity, so equal resources give equal documents.
 */
export function collectShootState(options: CollectOptions): ShootState {
  const after = options.after ?? 'migrate';
  const seen = new Set<string>();
  const notMigrated: string[] = [];
  const extensions = [...options.resources]
    .sort((a, b) => extensionId(a).localeCompare(extensionId(b)))
    .map((r) => {
      const id = extensionId(r);
      if (seen.has(id))
        throw new ShootStateCollectError(`extension ${id} appears twice in ${options.shoot.technicalID}`);
      seen.add(id);
      if (r.namespace !== options.shoot.technicalID)
        throw new ShootStateCollectError(
          `extension ${id} is in namespace ${r.namespace}, not ${options.shoot.technicalID}`,
        );
      const last = r.status.lastOperation;
      if (after === 'migrate' && !(last?.type === 'Migrate' && last.state === 'Succeeded'))
        notMigrated.push(`${id} (${last ? `${last.type} ${last.state}` : 'never operated'})`);
      return {
        kind: r.kind,
        name: r.name,
        ...(r.purpose === undefined ? {} : { purpose: r.purpose }),
        ...(r.status.state === undefined ? {} : { state: r.status.state }),
        ...(r.status.resources === undefined ? {} : { resources: r.status.resources }),
      };
    });
  if (notMigrated.length > 0) {
    throw new ShootStateCollectError(
      `not every extension of ${options.shoot.technicalID} has been migrated: ${notMigrated.join(', ')}`,
    );
  }
  return {
    apiVersion: SHOOT_STATE_API_VERSION,
    kind: 'ShootState',
    shoot: options.shoot,
    extensions,
    collectedAt: options.now.toISOString(),
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    collectedAfter: after,
  };
}

export interface ApplyOptions {
  state: ShootState;
  /**
   * The resources the destination is about to create (from the shoot spec). Each gets the saved state of
   * its entry; entries without a resource here are recreated from the entry alone. Default: none.
   */
  resources?: readonly ExtensionResource[];
}

/**
 * Puts the saved states onto extension resources and asks for a `restore` on each: the step before the
 * destination's restore. Resources without an entry are annotated too (a restore without state is a
 * reconcile). The restore annotation stays until each restore succeeds.
 */
export function applyShootState(options: ApplyOptions): ExtensionResource[] {
  const { state } = options;
  const byId = new Map(state.extensions.map((e) => [extensionId(e), e]));
  const out: ExtensionResource[] = [];
  const used = new Set<string>();
  for (const resource of options.resources ?? []) {
    const id = extensionId(resource);
    const entry = byId.get(id);
    used.add(id);
    const {
      state: _old,
      resources: _oldResources,
      lastOperation: _op,
      observedGeneration: _gen,
      ...rest
    } = resource.status;
    out.push(
      annotate(
        {
          ...resource,
          status: {
            ...rest,
            ...(entry?.state === undefined ? {} : { state: entry.state }),
            ...(entry?.resources ? { resources: entry.resources } : {}),
          },
        },
        'restore',
      ),
    );
  }
  for (const entry of state.extensions) {
    if (used.has(extensionId(entry))) continue;
    const fresh = newExtension({
      kind: entry.kind,
      name: entry.name,
      namespace: state.shoot.technicalID,
      ...(entry.purpose === undefined ? {} : { purpose: entry.purpose }),
    });
    out.push(
      annotate(
        {
          ...fresh,
          status: {
            ...(entry.state === undefined ? {} : { state: entry.state }),
            ...(entry.resources ? { resources: entry.resources } : {}),
          },
        },
        'restore',
      ),
    );
  }
  return out;
}
