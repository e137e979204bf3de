import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  liveWayOut,
  learnerCaughtUp,
  LiveWalkConflictError,
  mayForce,
  nextLiveStep,
  PROMOTE_APPLY_LAG,
  quorum,
  validateLiveWalkSpec,
  type LiveWalkObservation,
  type LiveWalkSpec,
  type LiveWalkStep,
  type WalkMember,
  type WalkSide,
} from '../../../core/migration/index.js';
import { ownerValueAdmits, type OwnerValue } from '../../../core/ownership/index.js';

const S = 'seed-s-1';
const D = 'seed-d-2';
const CLUSTER = 'c0ffee';
const LIVE: OwnerValue = { kind: 'live', origin: S, destination: D, cluster: CLUSTER };

function spec(sources: number, destinations: number): LiveWalkSpec {
  return {
    source: { identity: S, members: Array.from({ length: sources }, (_, i) => `s${i}`) },
    destination: { identity: D, members: Array.from({ length: destinations }, (_, i) => `d${i}`) },
    cluster: CLUSTER,
  };
}

/** A model of the cluster the walk acts on: every applied change commits one raft entry on every member. */
class Cluster {
  observed: LiveWalkObservation;
  private serial = 0;

  constructor(walk: LiveWalkSpec) {
    const members = walk.source.members.map((name) => this.member(name, 'source', false));
    this.observed = {
      owner: { kind: 'seed', seed: S },
      cluster: CLUSTER,
      members,
      leader: members.at(-1)!.id,
      sourceRetired: false,
    };
  }

  apply(step: LiveWalkStep): void {
    const o = this.observed;
    const members = [...o.members];
    const at = (name: string) => members.findIndex((m) => m.name === name);
    switch (step.kind) {
      case 'own-both':
        this.observed = { ...o, owner: LIVE };
        return;
      case 'own-destination':
        this.observed = { ...o, owner: { kind: 'seed', seed: D } };
        return;
      case 'retire-source':
        this.observed = { ...o, sourceRetired: true };
        return;
      case 'add-learner':
        members.push({ ...this.member(step.member, 'destination', true), started: false, raft: undefined });
        break;
      case 'start':
        members[at(step.member)] = { ...members[at(step.member)]!, started: true };
        break;
      case 'promote':
        members[at(step.member)] = { ...members[at(step.member)]!, learner: false };
        break;
      case 'move-leader':
        this.observed = { ...o, leader: members[at(step.to)]!.id };
        return;
      case 'remove':
        expect(step.id, 'the leader is never removed').not.toBe(o.leader);
        members.splice(at(step.member), 1);
        break;
      case 'force':
        // A cluster of its own with its data; the other members of its side would rejoin it.
        members.splice(0, members.length, members[at(step.member)]!);
        this.observed = { ...o, members, leader: members[0]!.id };
        return;
      case 'done':
        return;
    }
    const index = ++this.serial;
    this.observed = {
      ...o,
      members: members.map((m) => (m.started ? { ...m, raft: { term: 2, index: 100 + index } } : m)),
    };
  }

  private member(name: string, side: WalkSide, learner: boolean): WalkMember {
    return { id: String(++this.serial), name, side, learner, started: true, raft: { term: 2, index: 100 } };
  }
}

/** Every observation the walk passes through, and its steps. */
function walkThrough(walk: LiveWalkSpec): { states: LiveWalkObservation[]; steps: LiveWalkStep[] } {
  const cluster = new Cluster(walk);
  const states = [cluster.observed];
  const steps: LiveWalkStep[] = [];
  for (let i = 0; i < 100; i++) {
    const step = nextLiveStep(walk, cluster.observed);
    steps.push(step);
    if (step.kind === 'done') return { states, steps };
    cluster.apply(step);
    states.push(cluster.observed);
  }
  throw new Error('the walk did not end within 100 steps');
}

const SIZES: [number, number][] = [
  [1, 1],
  [3, 3],
  [1, 3],
  [3, 1],
  [5, 5],
];

describe('nextLiveStep', () => {
  it('walks a single member 1 -> 2 -> 1, moving leadership before the source leaves', () => {
    expect(walkThrough(spec(1, 1)).steps.map((s) => s.kind)).toEqual([
      'own-both',
      'add-learner',
      'start',
      'promote',
      'move-leader',
      'remove',
      'own-destination',
      'retire-source',
      'done',
    ]);
  });

  it('walks three members one at a time, never more than four voters, leadership moving once', () => {
    const { steps } = walkThrough(spec(3, 3));
    expect(steps.map((s) => (s.kind === 'remove' ? `remove ${s.member}` : s.kind))).toEqual([
      'own-both',
      ...['add-learner', 'start', 'promote', 'remove s0'],
      ...['add-learner', 'start', 'promote', 'remove s1'],
      ...['add-learner', 'start', 'promote', 'move-leader', 'remove s2'],
      'own-destination',
      'retire-source',
      'done',
    ]);
  });

  it.each(SIZES)('from %i to %i members keeps etcd available and ends on the destination alone', (from, to) => {
    const walk = spec(from, to);
    const { states } = walkThrough(walk);
    for (const o of states) {
      const voters = o.members.filter((m) => !m.learner);
      expect(o.members.filter((m) => m.learner).length, 'etcd allows one learner').toBeLessThanOrEqual(1);
      expect(voters.length).toBeGreaterThanOrEqual(Math.min(from, to));
      expect(voters.length).toBeLessThanOrEqual(Math.max(from, to) + 1);
      expect(
        voters.some((m) => m.id === o.leader),
        'a voter leads throughout',
      ).toBe(true);
      // Fault tolerance never drops below the smaller cluster's.
      expect(voters.length - quorum(voters.length)).toBeGreaterThanOrEqual(
        Math.min(from, to) - quorum(Math.min(from, to)),
      );
    }
    const end = states.at(-1)!;
    expect(end.owner).toEqual({ kind: 'seed', seed: D });
    expect(end.members.map((m) => m.name).sort()).toEqual([...walk.destination.members].sort());
    expect(end.members.every((m) => !m.learner && m.side === 'destination')).toBe(true);
    expect(end.sourceRetired).toBe(true);
  });

  it('resumes from any point with nothing remembered: the same steps follow from each state', () => {
    const walk = spec(3, 3);
    const { states, steps } = walkThrough(walk);
    states.forEach((o, i) => expect(nextLiveStep(walk, o)).toEqual(steps[i]));
  });

  it('removes a member neither seed plans before anything else', () => {
    const walk = spec(1, 1);
    const observed: LiveWalkObservation = {
      owner: LIVE,
      cluster: CLUSTER,
      members: [
        { id: '1', name: 's0', side: 'source', learner: false, started: true },
        { id: '9', name: '', side: 'stranger', learner: true, started: false },
      ],
      leader: '1',
      sourceRetired: false,
    };
    expect(nextLiveStep(walk, observed)).toEqual({ kind: 'remove', member: '', id: '9' });
  });

  it('refuses an owner record that names neither the walk nor its source', () => {
    const { states } = walkThrough(spec(1, 1));
    const midway = states[3]!;
    for (const owner of [
      undefined,
      { kind: 'seed', seed: 'seed-x' } as const,
      { ...LIVE, cluster: 'beef' },
      { kind: 'live', origin: D, destination: S, cluster: CLUSTER } as const,
    ])
      expect(() => nextLiveStep(spec(1, 1), { ...midway, owner })).toThrow(LiveWalkConflictError);
    expect(
      () => nextLiveStep(spec(1, 1), { ...midway, owner: { kind: 'seed', seed: D } }),
      'the destination cannot own a cluster that still spans the source',
    ).toThrow(LiveWalkConflictError);
  });

  it('refuses to name a cluster that etcd does not report: the live value would fence every member', () => {
    const start = walkThrough(spec(1, 1)).states[0]!;
    expect(() => nextLiveStep(spec(1, 1), { ...start, cluster: 'beef' })).toThrow(LiveWalkConflictError);
  });

  it('validates the spec', () => {
    expect(() => validateLiveWalkSpec(spec(1, 1))).not.toThrow();
    expect(() => validateLiveWalkSpec({ ...spec(1, 1), destination: { identity: S, members: ['d0'] } })).toThrow();
    expect(() => validateLiveWalkSpec({ ...spec(1, 1), destination: { identity: D, members: ['s0'] } })).toThrow();
    expect(() => validateLiveWalkSpec({ ...spec(1, 1), destination: { identity: D, members: [] } })).toThrow();
  });
});

/** Brute force over every quorum: does each contain an answering voter of `side`? */
function everyQuorumHolds(voters: readonly WalkMember[], side: WalkSide): boolean {
  const q = quorum(voters.length);
  for (let mask = 0; mask < 1 << voters.length; mask++) {
    const chosen = voters.filter((_, i) => mask & (1 << i));
    if (chosen.length < q) continue;
    if (!chosen.some((m) => m.side === side && m.raft !== undefined)) return false;
  }
  return voters.some((m) => m.side === side && m.raft !== undefined);
}

const voterArb = fc.record({
  side: fc.constantFrom<WalkSide>('source', 'destination'),
  answers: fc.boolean(),
  index: fc.nat(50),
});

describe('learnerCaughtUp', () => {
  const leader: WalkMember = {
    id: '1',
    name: 's0',
    side: 'source',
    learner: false,
    started: true,
    raft: { term: 2, index: 50_000, applied: 50_000 },
  };
  const observe = (learner: Partial<WalkMember>, leaderId: string | null = '1'): LiveWalkObservation => ({
    owner: LIVE,
    cluster: CLUSTER,
    members: [leader, { id: '2', name: 'd0', side: 'destination', learner: true, started: true, ...learner }],
    ...(leaderId === null ? {} : { leader: leaderId }),
    sourceRetired: false,
  });

  it("waits while the learner's store still applies what its raft log holds (a snapshot it restores)", () => {
    // Its log matches the leader's (etcd would promote it), its store is still at the snapshot's start.
    expect(learnerCaughtUp(observe({ raft: { term: 2, index: 50_000, applied: 3 } }), 'd0')).toBe(false);
    expect(
      learnerCaughtUp(observe({ raft: { term: 2, index: 50_000, applied: 50_000 - PROMOTE_APPLY_LAG - 1 } }), 'd0'),
    ).toBe(false);
  });

  it("promotes a learner whose store applied the leader's log to within the lag", () => {
    expect(
      learnerCaughtUp(observe({ raft: { term: 2, index: 50_000, applied: 50_000 - PROMOTE_APPLY_LAG } }), 'd0'),
    ).toBe(true);
    expect(learnerCaughtUp(observe({ raft: { term: 2, index: 50_001, applied: 50_001 } }), 'd0')).toBe(true);
  });

  it('compares the raft log when the member reports no applied index', () => {
    expect(learnerCaughtUp(observe({ raft: { term: 2, index: 49_500 } }), 'd0')).toBe(true);
    expect(learnerCaughtUp(observe({ raft: { term: 2, index: 40_000 } }), 'd0')).toBe(false);
  });

  it('waits for a learner that does not answer, or a cluster without a leader', () => {
    expect(learnerCaughtUp(observe({}), 'd0')).toBe(false);
    expect(learnerCaughtUp(observe({ raft: { term: 2, index: 50_000, applied: 50_000 } }, null), 'd0')).toBe(false);
    expect(learnerCaughtUp(observe({ raft: { term: 2, index: 50_000, applied: 50_000 } }), 'd9')).toBe(false);
  });
});

describe('mayForce', () => {
  it('holds exactly when every quorum of the voters contains an answering voter of that side', () => {
    fc.assert(
      fc.property(fc.array(voterArb, { minLength: 1, maxLength: 9 }), (drawn) => {
        const voters: WalkMember[] = drawn.map((v, i) => ({
          id: String(i),
          name: `m${i}`,
          side: v.side,
          learner: false,
          started: true,
          ...(v.answers ? { raft: { term: 3, index: v.index } } : {}),
        }));
        for (const side of ['source', 'destination'] as const)
          expect(mayForce(voters, side)).toBe(everyQuorumHolds(voters, side));
      }),
    );
  });
});

describe('liveWayOut at every point of every walk', () => {
  const reaches = [
    { source: false, destination: true },
    { source: true, destination: false },
    { source: false, destination: false },
  ];

  it.each(SIZES)('from %i to %i members: each way out keeps one cluster and every acknowledged write', (from, to) => {
    const walk = spec(from, to);
    const seen = new Set<string>();
    for (const o of walkThrough(walk).states) {
      expect(liveWayOut(walk, o, { source: true, destination: true })).toEqual({ kind: 'continue' });
      const voters = o.members.filter((m) => !m.learner);
      for (const reach of reaches) {
        // A lost seed's members do not answer.
        const lost = (m: WalkMember) => (m.side === 'source' ? !reach.source : !reach.destination);
        const seenNow: LiveWalkObservation = {
          ...o,
          members: o.members.map((m) => (lost(m) ? { ...m, raft: undefined } : m)),
        };
        const out = liveWayOut(walk, seenNow, reach);
        seen.add(out.kind);
        const answering = seenNow.members.filter((m) => !m.learner && m.raft !== undefined);
        switch (out.kind) {
          case 'continue':
            if (o.owner?.kind === 'seed' && o.owner.seed === D) break;
            // The side that answers can commit the rest of the walk on its own.
            expect(answering.length).toBeGreaterThanOrEqual(quorum(voters.length));
            break;
          case 'force': {
            const side = out.side;
            expect(side === 'source' ? reach.source : reach.destination, 'only a reachable side is forced').toBe(true);
            expect(
              everyQuorumHolds(
                seenNow.members.filter((m) => !m.learner),
                side,
              ),
            ).toBe(true);
            const forced = seenNow.members.find((m) => m.name === out.member)!;
            expect(forced.side).toBe(side);
            for (const m of answering.filter((a) => a.side === side))
              expect(forced.raft!.index).toBeGreaterThanOrEqual(m.raft!.index);
            // The owner record then names the forced side alone: the other side's members are fenced.
            const owner: OwnerValue = { kind: 'seed', seed: side === 'source' ? S : D };
            const other = side === 'source' ? D : S;
            expect(ownerValueAdmits(owner, { identity: other, cluster: CLUSTER })).toBe('not-owner');
            break;
          }
          case 'abort-to-source':
            expect(reach.source).toBe(true);
            expect(answering.filter((m) => m.side === 'source').length).toBeGreaterThanOrEqual(quorum(voters.length));
            expect(out.remove).toEqual(o.members.filter((m) => m.side === 'destination').map((m) => m.name));
            break;
          case 'bad-path':
            // The snapshots are the only copy the garden can reach: the destination holds no quorum's worth.
            expect(reach.destination).toBe(true);
            expect(
              everyQuorumHolds(
                seenNow.members.filter((m) => !m.learner),
                'destination',
              ),
            ).toBe(false);
            break;
          case 'hold':
            expect(reach.source && reach.destination).toBe(false);
            break;
        }
      }
    }
    expect(seen.has('bad-path') && seen.has('abort-to-source') && seen.has('hold')).toBe(true);
    if (from === 1 && to === 1) expect(seen.has('force')).toBe(true);
  });

  it('forces the latest of the destination voters, by term before index', () => {
    const walk = spec(3, 3);
    const voter = (id: string, side: WalkSide, raft?: { term: number; index: number }): WalkMember => ({
      id,
      name: `${side[0]}${id}`,
      side,
      learner: false,
      started: true,
      ...(raft ? { raft } : {}),
    });
    // Voters s2, d1, d2 (quorum 2): the source lost, every quorum holds d1 or d2.
    const observed: LiveWalkObservation = {
      owner: LIVE,
      cluster: CLUSTER,
      members: [
        voter('1', 'source'),
        voter('2', 'destination', { term: 3, index: 120 }),
        voter('3', 'destination', { term: 4, index: 90 }),
      ],
      leader: '1',
      sourceRetired: false,
    };
    expect(liveWayOut(walk, observed, { source: false, destination: true })).toEqual({
      kind: 'continue',
    });
    // d2 does not answer: the quorum {s1, d2} holds no answering destination voter, so nothing may be forced.
    const oneAnswers = {
      ...observed,
      members: [observed.members[0]!, observed.members[1]!, voter('3', 'destination')],
    };
    expect(liveWayOut(walk, oneAnswers, { source: false, destination: true })).toEqual({ kind: 'bad-path' });
    // Four voters (quorum 3), two on the lost source: every quorum holds d2 or d3, and d3's term is the later.
    const fourVoters = { ...observed, members: [...observed.members, voter('4', 'source')] };
    expect(liveWayOut(walk, fourVoters, { source: false, destination: true })).toEqual({
      kind: 'force',
      side: 'destination',
      member: 'd3',
    });
  });

  it.each(SIZES)(
    'from %i to %i members: once the owner record names the destination after `force`, its latest voter is forced, then the source retires',
    (from, to) => {
      const walk = spec(from, to);
      let forced = 0;
      for (const o of walkThrough(walk).states) {
        const seenNow: LiveWalkObservation = {
          ...o,
          members: o.members.map((m) => (m.side === 'source' ? { ...m, raft: undefined } : m)),
        };
        const out = liveWayOut(walk, seenNow, { source: false, destination: true });
        const owned: LiveWalkObservation = { ...seenNow, owner: { kind: 'seed', seed: D } };
        if (out.kind === 'bad-path') {
          // The destination holds no quorum's worth of the writes: nothing may force it, whatever the record says.
          expect(() => nextLiveStep(walk, owned)).toThrow(LiveWalkConflictError);
          continue;
        }
        if (out.kind !== 'force') continue;
        forced++;
        const step = nextLiveStep(walk, owned);
        expect(step).toEqual({ kind: 'force', member: out.member });
        const cluster = new Cluster(walk);
        cluster.observed = owned;
        cluster.apply(step);
        // The destination's other members join the forced one, then the source retires.
        for (let i = 0; i < 20; i++) {
          const next = nextLiveStep(walk, cluster.observed);
          if (next.kind === 'retire-source') break;
          expect(['add-learner', 'start', 'promote']).toContain(next.kind);
          cluster.apply(next);
        }
        expect(cluster.observed.members.map((m) => m.name).sort()).toEqual([...walk.destination.members].sort());
        expect(nextLiveStep(walk, cluster.observed)).toEqual({ kind: 'retire-source' });
      }
      if (from === 1 && to === 1) expect(forced).toBeGreaterThan(0);
    },
  );

  it('a two-voter cluster losing either seed is forced on the other side, never on both', () => {
    const walk = spec(1, 1);
    const twoVoters = walkThrough(walk).states.find(
      (o) => o.members.length === 2 && o.members.every((m) => !m.learner),
    )!;
    const without = (side: WalkSide) => ({
      ...twoVoters,
      members: twoVoters.members.map((m) => (m.side === side ? { ...m, raft: undefined } : m)),
    });
    expect(liveWayOut(walk, without('source'), { source: false, destination: true })).toEqual({
      kind: 'force',
      side: 'destination',
      member: 'd0',
    });
    expect(liveWayOut(walk, without('destination'), { source: true, destination: false })).toEqual({
      kind: 'force',
      side: 'source',
      member: 's0',
    });
  });
});
