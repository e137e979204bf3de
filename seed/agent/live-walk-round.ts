import type { CommandOf, CommandResult } from '../../core/commands/index.js';
import { ValidationError } from '../../core/errors.js';
import {
  describeLiveStep,
  liveWayOut,
  LiveWalkConflictError,
  type LiveWalkSpec,
  type LiveWalkStep,
} from '../../core/migration/live-walk.js';
import { parseOwnerValue } from '../../core/ownership/owner-value.js';
import { anyMember } from '../backup-restore/cluster/join.js';
import {
  observeLiveWalk,
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
