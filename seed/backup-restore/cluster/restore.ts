import { planRestore, type SnapshotStore } from '../../../core/snapshots/index.js';
import { ClusterMemberError, RestoreRevisionError } from '../errors.js';
import { clearWriteAlarms, range } from '../etcd-gateway.js';
import type { EtcdSupervisor } from '../etcd-supervisor.js';
import { sleep } from '../etcd-process.js';
import type { RangedObjectReader } from '../ranged-download.js';
import { checkFidelity, lastDeltaOf, type NamedDigest } from '../fidelity.js';
import { LeaseHold } from '../leases.js';
import { ReplayTarget } from '../replay.js';
import { replayPlan, restoreDataDir, type RestoreResult } from '../restorer.js';

export interface RestoreMemberOptions {
  readonly store: SnapshotStore;
  readonly technicalID: string;
  readonly supervisor: EtcdSupervisor;
  readonly stagingDir: string;
  readonly cluster: { readonly initialCluster: readonly { name: string; peerUrl: string }[]; readonly token: string };
  /** The member that replays the deltas (through raft, into every member); the others wait for them. */
  readonly coordinator: boolean;
  readonly expectedLastRevision?: number;
  /** The full snapshot already downloaded (the members of one machine share one download). */
  readonly file?: string;
  /** How long to wait for the other members (quorum) and for the replay. Default 120 s. */
  readonly timeoutMs?: number;
  readonly etcdctlBinary?: string;
  readonly rangedReader?: RangedObjectReader;
  /** Serve even where the key-space digest differs from the source's (the operator's override). */
  readonly acceptDigestMismatch?: boolean;
}

/**
 * One member's part of restoring a cluster from one snapshot (etcd's disaster recovery guide): every
 * member restores the same full snapshot with the whole member list and a new cluster token, and all
 * start together on their private addresses; the coordinator then replays the deltas through raft (and
 * keeps the leases alive meanwhile), and every member checks that its own data ends on the same revision
 * and holds the key space the source's last delta names there. The revisions of the plan are the same for
 * all: they list the same store.
 */
export async function restoreMember(options: RestoreMemberOptions): Promise<RestoreResult> {
  const started = performance.now();
  const { supervisor, store } = options;
  const timeoutMs = options.timeoutMs ?? 120_000;
  const deadline = started + timeoutMs;
  const plan = planRestore(await store.list(options.technicalID), {
    technicalID: options.technicalID,
    ...(options.expectedLastRevision === undefined ? {} : { expectedLastRevision: options.expectedLastRevision }),
  });
  const prepared = await restoreDataDir({ ...options, plan });
  supervisor.setCluster({ state: 'new', ...options.cluster });
  const t2 = performance.now();
  await supervisor.ensure('private');
  const endpoint = supervisor.clientUrl('private');
  // What the restored full snapshot holds, read from this member's own data before any member can serve
  // (a full snapshot may hold a little more than its name says). Every member restored the same file.
  let restoredFull = 0;
  await until(
    deadline,
    `member ${supervisor.name}: its restored data to answer`,
    async () => ((restoredFull = await revision(endpoint, true)), true),
  );
  // The revision the cluster is restored to: the same for every member, whatever clients write once one serves.
  const target = Math.max(plan.lastRevision, restoredFull);
  await until(deadline, `member ${supervisor.name}: the restored cluster to elect a leader`, () =>
    supervisor.healthy(),
  );
  const t3 = performance.now();
  const hold = new LeaseHold(() => endpoint);
  try {
    return await checkedMember();
  } finally {
    await hold.stop();
  }

  async function checkedMember(): Promise<RestoreResult> {
    let replayed = { transactions: 0, skippedEvents: 0 };
    let named: NamedDigest | undefined;
    if (options.coordinator) {
      // The source's write-guard or fence alarm, if its snapshot carries one (see restoreFromStore); cleared through raft for every member.
      await clearWriteAlarms(endpoint);
      hold.start();
      // A member on the private address takes revisions of any size already (`REPLAY_LIMIT_ARGS`).
      const into = new ReplayTarget({ endpoint });
      try {
        const result = await replayPlan({ target: into, store, plan, othersMayServe: true });
        if (result.revision < target)
          throw new RestoreRevisionError(
            `member ${supervisor.name} replayed to revision ${result.revision}, the snapshots end at ${target}`,
            { expected: target, actual: result.revision },
          );
        replayed = result;
        named = result.last;
      } finally {
        into.close();
      }
    } else {
      named = await lastDeltaOf(store, plan);
      // The coordinator's replay reaches the target; nobody else writes to a cluster before one member is restored.
      await until(
        deadline,
        `member ${supervisor.name}: the coordinator's replay to revision ${target}`,
        async () => (await revision(endpoint, false)) >= target,
      );
    }
    // This member's own data (not the leader's answer) must stand on that revision too; clients may have
    // written more since another member began to serve.
    await until(
      deadline,
      `member ${supervisor.name}: its own data to reach revision ${target}`,
      async () => (await revision(endpoint, true)) >= target,
    );
    const t4 = performance.now();
    // This member's own data, at the target revision (clients may write more once another member serves).
    const fidelity = await checkFidelity({
      endpoint,
      revision: target,
      named,
      serializable: true,
      ...(options.acceptDigestMismatch ? { acceptMismatch: true } : {}),
    });
    const t5 = performance.now();
    return {
      fullKey: plan.full.key,
      deltaKeys: plan.deltas.map((d) => d.key),
      revision: target,
      final: plan.final,
      transactions: replayed.transactions,
      skippedEvents: replayed.skippedEvents,
      fidelity,
      timings: {
        download: prepared.download,
        restore: prepared.restore,
        start: Math.round(t3 - t2),
        replay: Math.round(t4 - t3),
        check: Math.round(t5 - t4),
        total: Math.round(t5 - started),
      },
    };
  }
}

/** The revision of the cluster (linearizable) or of this member's own data (serializable). */
async function revision(endpoint: string, serializable: boolean): Promise<number> {
  const { header } = await range(endpoint, { key: '\0', serializable }, 2_000);
  return Number(header.revision ?? 0);
}

async function until(deadline: number, what: string, check: () => Promise<boolean>): Promise<void> {
  let last: unknown;
  while (performance.now() < deadline) {
    if (await check().catch((error: unknown) => ((last = error), false))) return;
    await sleep(50);
  }
  throw new ClusterMemberError(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`, '', {
    cause: last,
  });
}
