import { setTimeout as sleep } from 'node:timers/promises';
import type { CommandOf, CommandResult } from '../../core/commands/index.js';
import { ValidationError } from '../../core/errors.js';
import {
  describeLiveStep,
  liveWayOut,
  LiveWalkConflictError,
  type LiveWalkObservation,
  type LiveWalkSpec,
  type LiveWalkStep,
} from '../../core/migration/live-walk.js';
import { parseOwnerValue } from '../../core/ownership/owner-value.js';
import { anyMember } from '../backup-restore/cluster/join.js';
import {
  observeLiveWalk,
  takeWayOut,
  walkLive,
  type LiveWalkHost,
  type WalkMemberPlan,
} from '../backup-restore/cluster/live-walk.js';
import { clusterIdHex, memberList } from '../backup-restore/etcd-gateway.js';
import { WalkPeerLostError } from '../backup-restore/errors.js';
import { AgentCommandError, messageOf } from './errors.js';
import type { EtcdSpec, LiveMemberPlan } from './hosting.js';

/** The steps that are the garden's: a round walks up to the first of them and answers it. */
const GARDEN_STEPS = [
  'own-both',
  'own-destination',
  'retire-source',
] as const satisfies readonly LiveWalkStep['kind'][];

export interface LiveWalkRoundInput {
  command: CommandOf<'live-walk'>;
  /** This seed's member, as its hosting plans it. */
  self: LiveMemberPlan;
  /** Starts this seed's member, joining the running cluster (chosen again until etcd lists its name). */
  start: (join: NonNullable<EtcdSpec['join']>) => Promise<void>;
  /**
   * Starts this seed's kube-apiserver on its member and waits until it is ready: called once the member
   * votes, before leadership moves or a source member leaves, so that the shoot's clients have a
   * kube-apiserver here the moment the source's stops serving. True when this call started it (the round
   * names it among its steps). Best effort: it must not fail the walk.
   */
  follow?: () => Promise<boolean>;
  /** Starts this seed's member again as a cluster of its own, keeping its data (the way out `force`). */
  force: () => Promise<void>;
  /** Stops this seed's member and deletes its data and the plane (the way out `bad-path`: it only learnt). */
  wipe: () => Promise<void>;
  timeoutMs: number;
}

/**
 * How long the source's members may be silent, with no step of the walk succeeding, before a round gives up
 * with LiveWalkPeerLost: longer than a restart of their etcd, short beside the source's lease (three
 * heartbeats), which is what the garden then looks at.
 */
export const SOURCE_SILENCE_MS = 10_000;

/**
 * One round of a live walk on the destination (docs/design.md section 5, "The live path"): the first
 * round reads what the walk is of from the source's etcd (its cluster ID and members) and answers it; each
 * round walks as far as the owner record lets it, through etcd's API and this seed's own member, and
 * answers the garden's step that comes next. The owner record is the garden's to write, so the round
 * takes the value the garden says it wrote; the sidecars read the record itself and fence by it.
 */
export async function liveWalkRound(input: LiveWalkRoundInput): Promise<CommandResult<'live-walk'>> {
  const { command, self } = input;
  const owner = parseOwnerValue(command.owner);
  if (owner === undefined)
    throw new AgentCommandError('InvalidCommand', `owner ${JSON.stringify(command.owner)} is no owner record value`);
  const spec = command.spec ?? (await survey(command.source.clientUrls, self));
  const members: WalkMemberPlan[] = [
    ...spec.sourceMembers.map((m) => ({ ...m, side: 'source' as const })),
    { name: self.name, peerUrl: self.peerUrl, clientUrl: self.clientUrl, side: 'destination' },
  ];
  const walk: LiveWalkSpec = {
    source: { identity: command.source.identity, members: spec.sourceMembers.map((m) => m.name) },
    destination: { identity: command.destination.identity, members: [self.name] },
    cluster: spec.cluster,
  };
  const gardens = (step: string) => async () => {
    throw new Error(`${step} is the garden's step, never an agent's`);
  };
  const host: LiveWalkHost = {
    start: (member, initialCluster) => input.start({ name: member.name, members: initialCluster }),
    readOwner: async () => owner,
    writeOwner: gardens('an owner record change'),
    sourceRetired: async () => false,
    retireSource: gardens('retiring the source'),
    force: async (member) => {
      if (member.name !== self.name) throw new Error(`${member.name} is not this seed's member`);
      await input.force();
    },
  };
  const taken: string[] = [];
  const answer = (next: CommandResult<'live-walk'>['next'], extra: Partial<CommandResult<'live-walk'>> = {}) => ({
    spec,
    next,
    taken,
    ...extra,
    ...(self.loadBalancer ? { loadBalancer: self.loadBalancer } : {}),
  });
  try {
    let wayOut: CommandResult<'live-walk'>['wayOut'];
    if (command.lost === 'source') {
      const observed = await observeLiveWalk({ members, host }).catch((error: unknown) => {
        // A member that never started to join holds nothing of the cluster: nothing to observe, nothing to lose.
        if (!self.joined) return undefined;
        throw error;
      });
      const out = observed
        ? liveWayOut(walk, observed, { source: false, destination: true })
        : ({ kind: 'bad-path' } as const);
      if (out.kind === 'force') return answer('own-destination', { wayOut: 'force' });
      if (out.kind === 'bad-path') {
        await input.wipe();
        taken.push(`wipe ${self.name}`);
        return answer('bad-path', { wayOut: 'bad-path' });
      }
      if (out.kind !== 'continue')
        throw new LiveWalkConflictError(`no way out for the destination: ${out.kind}`, observed!);
      wayOut = 'continue';
    }
    const { next } = await walkLive({
      spec: walk,
      members,
      host,
      timeoutMs: input.timeoutMs,
      stopBefore: GARDEN_STEPS,
      // Told the source is lost, the walk goes on without it (its way out `continue`).
      ...(wayOut === undefined ? { sourceLostAfterMs: SOURCE_SILENCE_MS } : {}),
      beforeStep: async (step, observed) => {
        if (step.kind !== 'move-leader' && step.kind !== 'remove') return;
        if (!observed.members.some((m) => m.name === self.name && m.started && !m.learner)) return;
        if (await input.follow?.()) taken.push(`kube-apiserver on ${self.name}`);
      },
      // `start` is chosen again until etcd lists the member's name, which it publishes once it caught up: one step.
      onStep: (step) => {
        const described = describeLiveStep(step);
        if (taken.at(-1) !== described) taken.push(described);
      },
    });
    return answer(
      next.kind === 'done' ? 'done' : (next.kind as (typeof GARDEN_STEPS)[number]),
      wayOut ? { wayOut } : {},
    );
  } catch (cause) {
    if (cause instanceof WalkPeerLostError)
      throw new AgentCommandError('LiveWalkPeerLost', cause.message, { taken }, { cause });
    if (cause instanceof LiveWalkConflictError)
      throw new AgentCommandError('LiveWalkConflict', cause.message, { observed: cause.current, taken }, { cause });
    if (cause instanceof ValidationError)
      throw new AgentCommandError('InvalidCommand', cause.message, undefined, { cause });
    throw new AgentCommandError(
      'RuntimeUnavailable',
      `the live walk of ${command.shoot.technicalID} did not reach the garden's next step: ${messageOf(cause)}`,
      { taken },
      { cause },
    );
  }
}

export interface WalkBackRoundInput {
  command: CommandOf<'live-walk'> & { spec: NonNullable<CommandOf<'live-walk'>['spec']> };
  /**
   * Where this seed's member serves now: the address its etcd advertised to the survey may be gone once the
   * member restarts (forced), while this one stays.
   */
  clientUrl: string;
  /** Starts this seed's member again as a cluster of its own, keeping its data (the way out `force`). */
  force: (member: string) => Promise<void>;
  timeoutMs: number;
}

/**
 * A round of a live walk whose destination the garden found lost, on the source (docs/design.md section 5,
 * "Ways out"). While the owner record holds the live value, it only answers the way out (`own-source`): the
 * record goes back first, so that the destination's members fence should they come back. Once the record
 * names this seed, it takes it: `abort-to-source` removes the destination's members through the source's
 * quorum, `force` restarts the most up-to-date source member as a cluster of its own. Every member the
 * survey did not name on the source counts as the destination's: the walk added it, and counting a
 * stranger as a silent voter only makes the source's way out stricter.
 */
export async function walkBackRound(input: WalkBackRoundInput): Promise<CommandResult<'live-walk'>> {
  const { command } = input;
  const { spec } = command;
  const owner = parseOwnerValue(command.owner);
  if (owner === undefined || (owner.kind === 'seed' && owner.seed !== command.source.identity))
    throw new AgentCommandError(
      'InvalidCommand',
      `owner ${JSON.stringify(command.owner)} is neither the live value nor this seed's: no walk goes back under it`,
    );
  // The source runs one member of a walk for now (the survey refuses others), and it is this seed's.
  const members: WalkMemberPlan[] = spec.sourceMembers.map((m) => ({
    ...m,
    clientUrl: input.clientUrl,
    side: 'source' as const,
  }));
  const host: LiveWalkHost = {
    start: async () => {
      throw new Error('the source starts no member of a walk that goes back');
    },
    readOwner: async () => owner,
    // The garden wrote the record back to this seed before this round: the way out finds it so.
    writeOwner: async (_from, to) => {
      if (to.kind !== 'seed' || to.seed !== command.source.identity || owner.kind !== 'seed')
        throw new Error("the owner record is the garden's to write");
    },
    sourceRetired: async () => false,
    retireSource: async () => {
      throw new Error('a walk that goes back retires nothing');
    },
    force: (member) => input.force(member.name),
  };
  const taken: string[] = [];
  const deadline = performance.now() + input.timeoutMs;
  let lastError: unknown;
  let wayOut: 'abort-to-source' | 'force' | undefined;
  const walkEndsBy = command.walkEndsBy === undefined ? undefined : Date.parse(command.walkEndsBy);
  try {
    while (performance.now() < deadline) {
      let observed: Awaited<ReturnType<typeof observeLiveWalk>>;
      try {
        observed = withDestination(await observeLiveWalk({ members, host }));
      } catch (error) {
        // A member forced a moment ago is still starting.
        lastError = error;
        await sleep(200);
        continue;
      }
      const destinationMembers = observed.members.filter((m) => m.side === 'destination').map((m) => m.name);
      const walk: LiveWalkSpec = {
        source: { identity: command.source.identity, members: spec.sourceMembers.map((m) => m.name) },
        destination: { identity: command.destination.identity, members: destinationMembers },
        cluster: spec.cluster,
      };
      const out = liveWayOut(walk, observed, { source: true, destination: false });
      if (out.kind !== 'abort-to-source' && out.kind !== 'force')
        throw new LiveWalkConflictError(
          `no way back to the source: ${out.kind === 'hold' ? out.reason : 'the destination holds the walk'}`,
          observed,
        );
      // A destination whose members answer may be cut off from the garden only, its round still walking: the
      // way out is answered once that round has ended by its own timeout. Members that answer no one here
      // commit nothing through this seed's quorum.
      const answering = observed.members.some((m) => m.side === 'destination' && m.raft !== undefined);
      if (owner.kind === 'live' && answering && walkEndsBy !== undefined && Date.now() < walkEndsBy) {
        taken.push(`wait for the destination's round until ${command.walkEndsBy}`);
        await sleep(Math.min(walkEndsBy - Date.now(), deadline - performance.now()));
        continue;
      }
      // What the round found first: a retry after the force finds the source's member alone, nothing to remove.
      wayOut ??= out.kind;
      if (owner.kind === 'live') return { spec, next: 'own-source', wayOut, taken };
      if (destinationMembers.length === 0) return { spec, next: 'done', wayOut, taken };
      await takeWayOut(out, observed, { spec: walk, members, host });
      taken.push(
        out.kind === 'force' ? `force ${out.member}` : destinationMembers.map((m) => `remove ${m}`).join(', '),
      );
    }
    throw new Error(`no member of the source answered within ${input.timeoutMs} ms: ${messageOf(lastError)}`);
  } catch (cause) {
    if (cause instanceof LiveWalkConflictError)
      throw new AgentCommandError('LiveWalkConflict', cause.message, { observed: cause.current, taken }, { cause });
    throw new AgentCommandError(
      'RuntimeUnavailable',
      `the walk of ${command.shoot.technicalID} back to the source did not finish: ${messageOf(cause)}`,
      { taken },
      { cause },
    );
  }
}

/** The members the walk added, labelled as the destination's (see walkBackRound). */
function withDestination(observed: LiveWalkObservation): LiveWalkObservation {
  return {
    ...observed,
    members: observed.members.map((m) => (m.side === 'stranger' ? { ...m, side: 'destination' as const } : m)),
  };
}

/** What the walk is of, read from the source's etcd: its cluster ID and every member but this seed's. */
async function survey(
  clientUrls: readonly string[],
  self: LiveMemberPlan,
): Promise<NonNullable<CommandOf<'live-walk'>['spec']>> {
  let listed: Awaited<ReturnType<typeof memberList>>;
  try {
    ({ value: listed } = await anyMember(clientUrls, (e) => memberList(e, 2_000)));
  } catch (cause) {
    throw new AgentCommandError(
      'RuntimeUnavailable',
      `the source's etcd does not answer at ${clientUrls.join(', ')}: ${messageOf(cause)}`,
      undefined,
      { cause },
    );
  }
  const sourceMembers = listed.members
    .filter((m) => !m.peerUrls.includes(self.peerUrl))
    .map((m) => {
      const peerUrl = m.peerUrls[0];
      const clientUrl = m.clientUrls[0];
      // A member added but never started has no client address: no walk can begin from such a cluster.
      if (m.name === '' || peerUrl === undefined || clientUrl === undefined)
        throw new AgentCommandError('LiveWalkConflict', `member ${m.id} of the source's etcd has not started`, {
          member: m.id,
        });
      return { name: m.name, peerUrl, clientUrl };
    });
  if (sourceMembers.length !== 1)
    throw new AgentCommandError(
      'LiveWalkUnsupported',
      `the source's etcd has ${sourceMembers.length} members; a live walk is of a single member for now`,
    );
  // A member speaks TLS to its peers or plain, never both: a source that still runs plain peers (its shoot's
  // secrets got the peer CA after it started) is walked by no destination with peer TLS; the good path moves it.
  const scheme = (url: string) => url.slice(0, url.indexOf(':'));
  const plain = sourceMembers.find((m) => scheme(m.peerUrl) !== scheme(self.peerUrl));
  if (plain)
    throw new AgentCommandError(
      'LiveWalkUnsupported',
      `the source's member ${plain.name} has its peers at ${plain.peerUrl}, this seed's member at ${self.peerUrl}: no cluster speaks both`,
    );
  return { cluster: clusterIdHex(listed.clusterId), sourceMembers };
}
