import { planCatchUp, planRestore } from '../../core/snapshots/index.js';
import { RestoreDigestError, RestoreRevisionError } from './errors.js';
import type { EtcdSupervisor } from './etcd-supervisor.js';
import { checkFidelity, lastDeltaOf } from './fidelity.js';
import { LeaseHold } from './leases.js';
import { clearAlarms } from './etcd-gateway.js';
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
 * deltas past its revision, replayed transaction by transaction and checked as a restore is (the key-space
 * digest from the one the restore ahead verified and the keys replayed since, not a pass over the
 * database); or, where `planCatchUp` says the data needs it, a restore from scratch. The plan checks
 * `expectedLastRevision` before anything is written. A replay that does not land on the source's
 * revisions or digest is not trusted to the restore ahead either: etcd is restored from scratch, and
 * only if that fails too does the catch-up fail. `ahead` undefined (an earlier catch-up failed and left
 * etcd in no known state): from scratch at once.
 */
export async function catchUpRestore(
  options: RestoreOptions & { readonly ahead: RestoreResult | undefined; readonly supervisor: EtcdSupervisor },
): Promise<CatchUpResult> {
  const started = performance.now();
  const { store, technicalID, supervisor } = options;
  const plan = planRestore(await store.list(technicalID), {
    technicalID,
    ...(options.expectedLastRevision === undefined ? {} : { expectedLastRevision: options.expectedLastRevision }),
  });
  await supervisor.ensure('private');
  // A standby refuses every write by the fence's alarm while its kube-apiserver reads it (`openApiServerReadOnly`).
  // The replay writes: the kube-apiserver waits first, so that no write of its own lands in the source's history.
  await supervisor.holdApiServer();
  await clearAlarms(supervisor.clientUrl('private'), ['CORRUPT']);
  const hold = options.leaseHold ?? new LeaseHold(() => supervisor.clientUrl('private'));
  hold.start();
  const target = supervisor.replayTarget();
  let aheadRevision = 0;
  let reason: string;
  try {
    aheadRevision = await currentRevision(target.client);
    const ahead = options.ahead;
    const decision =
      ahead === undefined
        ? { kind: 'restore' as const, reason: 'an earlier catch-up failed: etcd holds no known state' }
        : planCatchUp({ plan, aheadFullKey: ahead.fullKey, revision: aheadRevision });
    if (decision.kind === 'replay' && ahead !== undefined) {
      const t0 = performance.now();
      const touched = new Set<string>();
      try {
        const replayed = await replayPlan({ target, store, plan: { ...plan, deltas: decision.deltas }, touched });
        const t1 = performance.now();
        const base = ahead.fidelity.revision === aheadRevision ? ahead.fidelity : undefined;
        const fidelity = await checkFidelity({
          endpoint: target.endpoint,
          revision: replayed.revision,
          // Nothing to replay (the refresh replayed it all): the plan's last delta names the digest still.
          named: replayed.last ?? (await lastDeltaOf(store, plan)),
          ...(base === undefined ? {} : { base: { from: base, touched } }),
          ...(options.acceptDigestMismatch ? { acceptMismatch: true } : {}),
        });
        const t2 = performance.now();
        return {
          ...restoreResult(plan, replayed, fidelity, {
            download: 0,
            restore: 0,
            start: 0,
            replay: Math.round(t1 - t0),
            check: Math.round(t2 - t1),
            total: Math.round(t2 - started),
          }),
          aheadRevision,
          caughtUp: true,
        };
      } catch (error) {
        if (!(error instanceof RestoreDigestError || error instanceof RestoreRevisionError)) throw error;
        reason = `the replay onto the restore ahead failed its check (${error.message})`;
      }
    } else reason = decision.kind === 'restore' ? decision.reason : 'nothing restored ahead';
  } finally {
    target.close();
    if (options.leaseHold === undefined) await hold.stop();
  }
  const restored = await restoreFromStore(options);
  return { ...restored, aheadRevision, caughtUp: false, reason };
}
