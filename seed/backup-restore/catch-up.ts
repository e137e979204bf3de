import { planCatchUp, planRestore } from '../../core/snapshots/index.js';
import type { EtcdSupervisor } from './etcd-supervisor.js';
import { currentRevision } from './replay.js';
import { replayPlan, restoreFromStore, restoreResult, type RestoreOptions, type RestoreResult } from './restorer.js';

export interface CatchUpResult extends RestoreResult {
  /** The revision the restore ahead had reached. */
  readonly aheadRevision: number;
  /** Only deltas were replayed onto the restore ahead; false: it was discarded and etcd restored from scratch (`reason`). */
  readonly caughtUp: boolean;
  readonly reason?: string;
}

/**
 * Brings an etcd restored ahead (private address, not serving) up to what the store holds now: the
 * deltas past its revision, replayed transaction by transaction and checked as a restore is; or, where
 * `planCatchUp` says the data needs it, a restore from scratch. The plan checks `expectedLastRevision`
 * before anything is written.
 */
export async function catchUpRestore(
  options: RestoreOptions & { readonly ahead: RestoreResult; readonly supervisor: EtcdSupervisor },
): Promise<CatchUpResult> {
  const started = performance.now();
  const { store, technicalID, supervisor } = options;
  const plan = planRestore(await store.list(technicalID), {
    technicalID,
    ...(options.expectedLastRevision === undefined ? {} : { expectedLastRevision: options.expectedLastRevision }),
  });
  await supervisor.ensure('private');
  const target = supervisor.replayTarget();
  let aheadRevision: number;
  let reason: string;
  try {
    aheadRevision = await currentRevision(target.client);
    const decision = planCatchUp({ plan, aheadFullKey: options.ahead.fullKey, revision: aheadRevision });
    if (decision.kind === 'replay') {
      const t0 = performance.now();
      const replayed = await replayPlan({ target, store, plan: { ...plan, deltas: decision.deltas } });
      const replay = Math.round(performance.now() - t0);
      return {
        ...restoreResult(plan, replayed, {
          download: 0,
          restore: 0,
          start: 0,
          replay,
          total: Math.round(performance.now() - started),
        }),
        aheadRevision,
        caughtUp: true,
      };
    }
    reason = decision.reason;
  } finally {
    target.close();
  }
  const restored = await restoreFromStore(options);
  return { ...restored, aheadRevision, caughtUp: false, reason };
}
