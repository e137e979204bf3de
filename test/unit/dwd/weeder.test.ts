import { describe, expect, it } from 'vitest';
import {
  DEFAULT_WEEDER_TARGETS,
  type WeederDependency,
  DEPENDENTS_RESTARTED,
  ETCD,
  KUBE_APISERVER,
  WEEDER_DEPENDENCIES,
  decideWeeder,
  defaultWeederTarget,
  initialWeederState,
  weederStateSchema,
  type DependencyAvailability,
  type PodReport,
  type WeederState,
  type WeederVerdict,
} from '../../../core/dwd/index.js';
import { pod } from './builders.js';

const CP = { 'gardener.cloud/role': 'controlplane' };
const apiserver = pod('kube-apiserver-0', 'CrashLoopBackOff', { ...CP, role: 'apiserver' });
const kcm = pod('kube-controller-manager-7c9', 'CrashLoopBackOff', { ...CP, role: 'controller-manager' });
const scheduler = pod('kube-scheduler-5d8', 'CrashLoopBackOff', { ...CP, role: 'scheduler' });
const runningMcm = pod('machine-controller-manager-1', 'Running', { ...CP, role: 'machine-controller-manager' });
const etcdMain = pod('etcd-main-0', 'CrashLoopBackOff', { ...CP, role: 'main' });
const foreign = pod('vpn-seed-server-1', 'CrashLoopBackOff', { role: 'vpn' });
const deleting = pod('kube-scheduler-old', 'CrashLoopBackOff', { ...CP, role: 'scheduler' }, { deleting: true });
const PODS = [apiserver, kcm, scheduler, runningMcm, etcdMain, foreign, deleting];

const T0 = 1_700_000_000_000;
const DOWN: WeederState = { ...initialWeederState(), lastKnownAvailability: 'unavailable' };
const UP: WeederState = { ...initialWeederState(), lastKnownAvailability: 'available' };

function run(
  start: WeederState,
  rounds: Array<{ availability: DependencyAvailability; atSeconds: number; pods?: PodReport[] }>,
  dependency: WeederDependency = KUBE_APISERVER,
  options = {},
) {
  let current = start;
  return rounds.map((r) => {
    const decision = decideWeeder({
      state: current,
      observation: { availability: r.availability, nowMs: T0 + r.atSeconds * 1000, pods: r.pods ?? PODS },
      target: defaultWeederTarget(dependency),
      options,
    });
    current = decision.state;
    return decision;
  });
}

describe('decideWeeder: which pods', () => {
  it.each<{ dependency: WeederDependency; restarted: string[] }>([
    { dependency: KUBE_APISERVER, restarted: [kcm.name, scheduler.name] },
    { dependency: ETCD, restarted: [apiserver.name] },
  ])('on recovery of $dependency restarts only crash-looping dependants that match', ({ dependency, restarted }) => {
    // Act
    const [decision] = run(DOWN, [{ availability: 'available', atSeconds: 0 }], dependency);

    // Assess
    expect(decision!.verdict).toBe('recovered');
    expect(decision!.actions).toEqual(restarted.map((p) => ({ action: 'restart', pod: p, dependency })));
    expect(decision!.events).toEqual([
      expect.objectContaining({ type: 'Normal', reason: DEPENDENTS_RESTARTED, subjects: restarted }),
    ]);
    expect(decision!.state).toMatchObject({ recoveryEpoch: 1, recoveredAtMs: T0, restartedPods: restarted });
  });

  it('prefers the uid as identity and lists a duplicated pod once', () => {
    const a = pod('kcm', 'CrashLoopBackOff', { ...CP, role: 'controller-manager' }, { uid: 'u1' });
    const [decision] = run(DOWN, [{ availability: 'available', atSeconds: 0, pods: [a, a] }]);
    expect(decision!.actions).toHaveLength(1);
    expect(decision!.state.restartedPods).toEqual(['u1']);
  });

  it('restarts a recreated pod with the same name but a new uid in the same recovery', () => {
    const first = pod('etcd-x', 'CrashLoopBackOff', { ...CP, role: 'x' }, { uid: 'u1' });
    const second = { ...first, uid: 'u2' };
    const decisions = run(DOWN, [
      { availability: 'available', atSeconds: 0, pods: [first] },
      { availability: 'available', atSeconds: 10, pods: [second] },
    ]);
    expect(decisions.map((d) => d.actions.length)).toEqual([1, 1]);
  });
});

describe('decideWeeder: when', () => {
  it.each<{
    name: string;
    start: WeederState;
    availability: DependencyAvailability;
    verdict: WeederVerdict;
    restarts: number;
  }>([
    {
      name: 'first observation is no recovery',
      start: initialWeederState(),
      availability: 'available',
      verdict: 'first-observation',
      restarts: 0,
    },
    { name: 'still available, no recovery open', start: UP, availability: 'available', verdict: 'idle', restarts: 0 },
    { name: 'unavailable', start: UP, availability: 'unavailable', verdict: 'unavailable', restarts: 0 },
    { name: 'still unavailable', start: DOWN, availability: 'unavailable', verdict: 'unavailable', restarts: 0 },
    { name: 'unknown while down', start: DOWN, availability: 'unknown', verdict: 'unknown', restarts: 0 },
    { name: 'recovery', start: DOWN, availability: 'available', verdict: 'recovered', restarts: 2 },
  ])('$name', ({ start, availability, verdict, restarts }) => {
    const [decision] = run(start, [{ availability, atSeconds: 0 }]);
    expect(decision!.verdict).toBe(verdict);
    expect(decision!.actions).toHaveLength(restarts);
  });

  it('restarts once per recovery: a repeated round does not restart again', () => {
    const decisions = run(DOWN, [
      { availability: 'available', atSeconds: 0 },
      { availability: 'available', atSeconds: 10 },
      { availability: 'available', atSeconds: 20 },
    ]);
    expect(decisions.map((d) => d.actions.length)).toEqual([2, 0, 0]);
    expect(decisions.map((d) => d.verdict)).toEqual(['recovered', 'watching', 'watching']);
  });

  it('inside the watch window restarts a dependant that starts crash-looping after the recovery round', () => {
    const calm = PODS.map((p) => (p === scheduler ? { ...p, state: 'Error' } : p));
    const decisions = run(DOWN, [
      { availability: 'available', atSeconds: 0, pods: calm },
      { availability: 'available', atSeconds: 30 },
    ]);
    expect(decisions.map((d) => d.actions.map((a) => a.pod))).toEqual([[kcm.name], [scheduler.name]]);
  });

  it.each([
    { watchDurationSeconds: 300, atSeconds: 300, restarts: 1 },
    { watchDurationSeconds: 300, atSeconds: 301, restarts: 0 },
    { watchDurationSeconds: 0, atSeconds: 1, restarts: 0 },
  ])(
    'after $atSeconds s with watchDurationSeconds $watchDurationSeconds restarts $restarts',
    ({ watchDurationSeconds, atSeconds, restarts }) => {
      const calm = PODS.map((p) => (p === scheduler ? { ...p, state: 'Running' } : p));
      const decisions = run(
        DOWN,
        [
          { availability: 'available', atSeconds: 0, pods: calm },
          { availability: 'available', atSeconds },
        ],
        KUBE_APISERVER,
        { watchDurationSeconds },
      );
      expect(decisions[1]!.actions).toHaveLength(restarts);
    },
  );

  it('a new outage and recovery is a new epoch that may restart the same pods again', () => {
    const decisions = run(DOWN, [
      { availability: 'available', atSeconds: 0 },
      { availability: 'unavailable', atSeconds: 10 },
      { availability: 'available', atSeconds: 20 },
    ]);
    expect(decisions.map((d) => d.actions.length)).toEqual([2, 0, 2]);
    expect(decisions[2]!.state.recoveryEpoch).toBe(2);
  });

  it('an unknown round between down and up does not hide the recovery', () => {
    const decisions = run(DOWN, [
      { availability: 'unknown', atSeconds: 0 },
      { availability: 'available', atSeconds: 10 },
    ]);
    expect(decisions.map((d) => d.verdict)).toEqual(['unknown', 'recovered']);
  });

  it('keeps states the store schema accepts and does not mutate its input', () => {
    const given = structuredClone(DOWN);
    const decisions = run(given, [
      { availability: 'available', atSeconds: 0 },
      { availability: 'unavailable', atSeconds: 5 },
    ]);
    expect(given).toEqual(DOWN);
    for (const d of decisions) expect(weederStateSchema.safeParse(d.state).success).toBe(true);
  });

  it('rejects a negative watch duration', () => {
    expect(() =>
      run(DOWN, [{ availability: 'available', atSeconds: 0 }], KUBE_APISERVER, { watchDurationSeconds: -1 }),
    ).toThrow(/watchDurationSeconds/);
  });
});

describe('default weeder targets', () => {
  it('cover every weeder dependency exactly once', () => {
    expect(DEFAULT_WEEDER_TARGETS.map((t) => t.dependency).sort()).toEqual([...WEEDER_DEPENDENCIES].sort());
    for (const d of WEEDER_DEPENDENCIES) expect(defaultWeederTarget(d).dependency).toBe(d);
  });
});
