import { setTimeout as sleep } from 'node:timers/promises';
import {
  learnerCaughtUp,
  nextLiveStep,
  validateLiveWalkSpec,
  type LiveWayOut,
  type LiveWalkObservation,
  type LiveWalkSpec,
  type LiveWalkStep,
  type WalkMember,
  type WalkSide,
} from '../../../core/migration/live-walk.js';
import type { OwnerValue } from '../../../core/ownership/owner-value.js';
import {
  clusterIdHex,
  memberAdd,
  memberList,
  memberPromote,
  memberRemove,
  memberStatus,
  moveLeader,
  type ClusterMember,
} from '../etcd-gateway.js';
import { ClusterMemberError, WalkPeerLostError } from '../errors.js';
import { anyMember } from './join.js';

/**
 * Carries out the steps `nextLiveStep` chooses (core/migration/live-walk.ts) on a real etcd cluster: the
 * membership changes through etcd's API, everything else through the `LiveWalkHost` (starting a member on
 * the destination, the owner record, the source's leftovers). Each step is observed afresh before it is
 * chosen, so a step that failed half way is simply chosen again or superseded.
 */

/** Where a planned member listens. */
export interface WalkMemberPlan {
  readonly name: string;
  readonly side: WalkSide;
  readonly peerUrl: string;
  readonly clientUrl: string;
}

export interface LiveWalkHost {
  /**
   * Starts a member that was added to the cluster: etcd joins the running cluster (`existing`). Chosen
   * again until etcd lists the member's name, so a member that runs already is left as it is.
   */
  start(member: WalkMemberPlan, initialCluster: readonly { name: string; peerUrl: string }[]): Promise<void>;
  readOwner(): Promise<OwnerValue | undefined>;
  /** Conditional: fails unless the record holds `from`. */
  writeOwner(from: OwnerValue | undefined, to: OwnerValue): Promise<void>;
  sourceRetired(): Promise<boolean>;
  retireSource(): Promise<void>;
  /** Restarts the member alone in a new cluster that keeps its data (`--force-new-cluster`); its side's others rejoin it. */
  force(member: WalkMemberPlan): Promise<void>;
}

export interface LiveWalkOptions {
  readonly spec: LiveWalkSpec;
  readonly members: readonly WalkMemberPlan[];
  readonly host: LiveWalkHost;
  /** The whole walk; a step etcd keeps refusing (a learner that does not catch up) ends it. */
  readonly timeoutMs: number;
  /** Per etcd call. */
  readonly callTimeoutMs?: number;
  readonly onStep?: (step: LiveWalkStep, observed: LiveWalkObservation) => void;
  /** Runs before a step is taken (what must hold first, such as a kube-apiserver following the walk); a failure ends the walk. */
  readonly beforeStep?: (step: LiveWalkStep, observed: LiveWalkObservation) => Promise<void>;
  /** Returns, without taking it, when the next step is one of these (a caller that takes the steps in turns). */
  readonly stopBefore?: readonly LiveWalkStep['kind'][];
  /**
   * Ends the walk with `WalkPeerLostError` once the source's members are in the cluster, none of them has
   * answered and no step succeeded for this long: the walk needs them (a quorum, the leader), and whether
   * their seed is lost is the garden's to tell. Absent: the walk tries until its timeout.
   */
  readonly sourceLostAfterMs?: number;
}

/** What the garden needs to choose the next step: etcd's member list and each member's raft position. */
export async function observeLiveWalk(
  options: Pick<LiveWalkOptions, 'members' | 'host' | 'callTimeoutMs'>,
): Promise<LiveWalkObservation> {
  const timeout = options.callTimeoutMs ?? 1_000;
  const [owner, sourceRetired] = await Promise.all([options.host.readOwner(), options.host.sourceRetired()]);
  const endpoints = options.members.map((m) => m.clientUrl);
  const { value: list } = await anyMember(endpoints, (e) => memberList(e, timeout));
  const members = await Promise.all(list.members.map((m) => walkMember(m, options.members, timeout)));
  const leader = members.find((m) => m.leader !== undefined)?.leader;
  return {
    owner,
    cluster: clusterIdHex(list.clusterId),
    members: members.map((m) => m.member),
    ...(leader !== undefined ? { leader } : {}),
    sourceRetired,
  };
}

async function walkMember(
  m: ClusterMember,
  plan: readonly WalkMemberPlan[],
  timeout: number,
): Promise<{ member: WalkMember; leader?: string }> {
  const planned = plan.find((p) => m.peerUrls.includes(p.peerUrl));
  const clientUrl = m.clientUrls[0] ?? planned?.clientUrl;
  const base = {
    id: m.id,
    name: planned?.name ?? m.name,
    side: planned?.side ?? ('stranger' as const),
    learner: m.isLearner,
    started: m.name !== '',
    ...(m.clientUrls[0] === undefined ? {} : { clientUrl: m.clientUrls[0] }),
  };
  if (!base.started || clientUrl === undefined) return { member: base };
  const status = await memberStatus(clientUrl, timeout).catch(() => undefined);
  if (status === undefined) return { member: base };
  return {
    member: { ...base, raft: { term: status.raftTerm, index: status.raftIndex, applied: status.raftAppliedIndex } },
    ...(status.leader !== '0' ? { leader: status.leader } : {}),
  };
}

/** Walks the cluster until `nextLiveStep` says done (or `stopBefore`): the steps taken, in order, and the next one. */
export async function walkLive(options: LiveWalkOptions): Promise<{ taken: LiveWalkStep[]; next: LiveWalkStep }> {
  validateLiveWalkSpec(options.spec);
  const deadline = performance.now() + options.timeoutMs;
  const taken: LiveWalkStep[] = [];
  const silence = new SourceSilence(options.sourceLostAfterMs);
  let lastError: unknown;
  while (performance.now() < deadline) {
    let observed: LiveWalkObservation;
    try {
      observed = await observeLiveWalk(options);
    } catch (error) {
      lastError = error;
      // No member answered, the source's among them.
      silence.note(undefined);
      await sleep(100);
      continue;
    }
    silence.note(observed);
    const step = nextLiveStep(options.spec, observed);
    if (step.kind === 'done' || options.stopBefore?.includes(step.kind)) return { taken, next: step };
    if (options.beforeStep) await unlessSourceLost(options.beforeStep(step, observed), options, silence);
    try {
      await applyLiveStep(step, observed, options);
      options.onStep?.(step, observed);
      taken.push(step);
      // Only a walk that stalls without them needs the source's members.
      silence.reset();
    } catch (error) {
      // etcd refuses a promotion until the learner caught up, and a transfer while an election runs.
      lastError = error;
      await sleep(100);
    }
  }
  throw new ClusterMemberError(
    `the live walk did not finish within ${options.timeoutMs} ms (${taken.length} steps taken): ${lastError instanceof Error ? lastError.message : String(lastError)}`,
    '',
    { cause: lastError },
  );
}

/** How long the source's members have been silent in the walk's observations (`sourceLostAfterMs`). */
class SourceSilence {
  private since: number | undefined;

  constructor(private readonly afterMs: number | undefined) {}

  get watched(): boolean {
    return this.afterMs !== undefined;
  }

  /**
   * Throws `WalkPeerLostError` once the source's members are in the cluster and silent for `afterMs`; an
   * observation that failed (`undefined`: no member answered at all) counts as silent.
   */
  note(observed: LiveWalkObservation | undefined): void {
    if (this.afterMs === undefined) return;
    const source = observed?.members.filter((m) => m.side === 'source');
    const silent = source === undefined || (source.length > 0 && source.every((m) => m.raft === undefined));
    this.since = silent ? (this.since ?? performance.now()) : undefined;
    if (this.since !== undefined && performance.now() - this.since >= this.afterMs)
      throw new WalkPeerLostError(
        `the source's members ${source === undefined ? '(none answers)' : source.map((m) => m.name).join(', ')} have not answered for ${this.afterMs} ms`,
        source?.map((m) => m.name).join(',') ?? '',
      );
  }

  reset(): void {
    this.since = undefined;
  }
}

/**
 * What must hold before a step (a kube-apiserver that follows the walk becomes ready only while etcd has a
 * quorum) may wait for the source: it ends with `WalkPeerLostError` as the walk's own loop would, once the
 * source's members have been silent for `sourceLostAfterMs`.
 */
async function unlessSourceLost<T>(work: Promise<T>, options: LiveWalkOptions, silence: SourceSilence): Promise<T> {
  if (!silence.watched) return work;
  let settled = false;
  const never = new Promise<never>(() => {});
  const watch = (async (): Promise<never> => {
    for (;;) {
      await sleep(500);
      const observed = settled ? undefined : await observeLiveWalk(options).catch(() => undefined);
      if (settled) return never;
      silence.note(observed);
    }
  })();
  try {
    return await Promise.race([work, watch]);
  } finally {
    settled = true;
  }
}

export async function applyLiveStep(
  step: LiveWalkStep,
  observed: LiveWalkObservation,
  options: Pick<LiveWalkOptions, 'spec' | 'members' | 'host' | 'callTimeoutMs'>,
): Promise<void> {
  const { spec, host } = options;
  const timeout = options.callTimeoutMs ?? 2_000;
  const plan = (name: string) => planned(options.members, name);
  const idOf = (name: string) => {
    const found = observed.members.find((m) => m.name === name);
    if (!found) throw new Error(`${name} is not a member of the cluster`);
    return found.id;
  };
  const urlsOf = (name?: string) => reachable(observed, options.members, (m) => name === undefined || m.name === name);
  // Whichever member answers takes a membership change (a follower forwards it to the leader).
  const endpoints = urlsOf();
  switch (step.kind) {
    case 'own-both':
      return host.writeOwner(observed.owner, {
        kind: 'live',
        origin: spec.source.identity,
        destination: spec.destination.identity,
        cluster: spec.cluster,
      });
    case 'own-destination':
      return host.writeOwner(observed.owner, { kind: 'seed', seed: spec.destination.identity });
    case 'retire-source':
      return host.retireSource();
    case 'add-learner':
      await anyMember(endpoints, (e) => memberAdd(e, { peerUrl: plan(step.member).peerUrl, learner: true }, timeout));
      return;
    case 'start': {
      const { value } = await anyMember(endpoints, (e) => memberList(e, timeout));
      const initialCluster = value.members.map((m) => {
        const planned = options.members.find((p) => m.peerUrls.includes(p.peerUrl));
        return { name: planned?.name ?? m.name, peerUrl: m.peerUrls[0] ?? '' };
      });
      return host.start(plan(step.member), initialCluster);
    }
    case 'promote':
      // Observed again, and promoted, once it caught up (the walk's loop waits between observations).
      if (!learnerCaughtUp(observed, step.member))
        throw new Error(`${step.member} has not applied the leader's log yet`);
      await anyMember(endpoints, (e) => memberPromote(e, idOf(step.member), timeout));
      return;
    case 'move-leader': {
      const leader = observed.members.find((m) => m.id === observed.leader);
      const leaderUrls = leader ? urlsOf(leader.name) : [];
      if (leaderUrls.length === 0) throw new Error('no leader to move leadership from');
      await anyMember(leaderUrls, (e) => moveLeader(e, idOf(step.to), timeout));
      return;
    }
    case 'force':
      return host.force(plan(step.member));
    case 'remove':
      // Not through the member that leaves: it stops once it applied its removal and may not answer.
      await anyMember(
        endpoints.filter((e) => !urlsOf(step.member).includes(e)),
        (e) => memberRemove(e, step.id, timeout),
      );
      return;
    case 'done':
      return;
  }
}

/**
 * Takes a way out `liveWayOut` chose after a seed was lost. The owner record is written first, and
 * conditionally from what was observed: of two ways out that would each form a cluster, only the one that
 * wins the record goes on. `bad-path` and `hold` are the migration's to take; nothing happens here.
 */
export async function takeWayOut(
  out: LiveWayOut,
  observed: LiveWalkObservation,
  options: Pick<LiveWalkOptions, 'spec' | 'members' | 'host' | 'callTimeoutMs'>,
): Promise<void> {
  const { spec, host } = options;
  const timeout = options.callTimeoutMs ?? 2_000;
  switch (out.kind) {
    case 'force': {
      const side = out.side === 'source' ? spec.source : spec.destination;
      await host.writeOwner(observed.owner, { kind: 'seed', seed: side.identity });
      await host.force(planned(options.members, out.member));
      return;
    }
    case 'abort-to-source': {
      const sourceUrls = reachable(observed, options.members, (m) => m.side === 'source');
      for (const m of observed.members.filter((o) => out.remove.includes(o.name)))
        await anyMember(sourceUrls, (e) => memberRemove(e, m.id, timeout));
      await host.writeOwner(observed.owner, { kind: 'seed', seed: spec.source.identity });
      return;
    }
    case 'continue':
    case 'bad-path':
    case 'hold':
      return;
  }
}

function planned(members: readonly WalkMemberPlan[], name: string): WalkMemberPlan {
  const found = members.find((m) => m.name === name);
  if (!found) throw new Error(`${name} is not a planned member`);
  return found;
}

/**
 * Where to reach the members `which` picks: first where etcd says each serves (a sidecar's own address, open
 * while its public one may still be fenced), then where the plan says.
 */
function reachable(
  observed: LiveWalkObservation,
  members: readonly WalkMemberPlan[],
  which: (m: { readonly name: string; readonly side: WalkSide | 'stranger' }) => boolean,
): string[] {
  const urls = [
    ...observed.members.filter(which).map((m) => m.clientUrl),
    ...members.filter(which).map((m) => m.clientUrl),
  ];
  return [...new Set(urls.filter((u): u is string => u !== undefined))];
}
