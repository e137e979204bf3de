import { describe, expect, it } from 'vitest';
import {
  desiredReplicas,
  newModel,
  observe,
  reconcileModel,
  reportModel,
  restartPod,
  scaleModel,
  type ControlPlaneModel,
} from '../../../seed/agent/model.js';

const technicalID = 'shoot--dev--api1';
const awake = (failureTolerance?: 'node' | 'zone'): ControlPlaneModel => {
  const model = newModel({ technicalID, hibernated: false, ...(failureTolerance ? { failureTolerance } : {}) });
  reconcileModel(model, { hibernated: false, ...(failureTolerance ? { failureTolerance } : {}) });
  return model;
};
const states = (model: ControlPlaneModel, component: string) =>
  model.pods.filter((p) => p.component === component).map((p) => p.state);

describe('control-plane model', () => {
  it.each([
    { name: 'non-HA', tolerance: undefined, expected: { etcd: 1, 'kube-apiserver': 1, 'kube-controller-manager': 1 } },
    {
      name: 'zone HA',
      tolerance: 'zone' as const,
      expected: { etcd: 3, 'kube-apiserver': 3, 'gardener-resource-manager': 3, 'kube-controller-manager': 2 },
    },
  ])('reconciles to the HA layout replicas, with one pod per replica ($name)', ({ tolerance, expected }) => {
    const model = awake(tolerance);

    expect(model.replicas).toMatchObject(expected);
    expect(model.pods).toHaveLength(Object.values(model.replicas).reduce((a, b) => a + b, 0));
    expect(model.pods.every((p) => p.labels['gardener.cloud/role'] === 'controlplane' && p.state === 'Running')).toBe(
      true,
    );
  });

  it('hibernation scales everything to zero', () => {
    expect(Object.values(desiredReplicas({ hibernated: true }))).toEqual(Array(7).fill(0));
  });

  it('a reconcile keeps what the watchdog holds down at zero, and a scale-up releases it', () => {
    // Prepare
    const model = awake('node');

    // Act
    const down = scaleModel(model, 'kube-controller-manager', 0);
    scaleModel(model, 'kube-controller-manager', 0);
    const { held } = reconcileModel(model, { hibernated: false });

    // Assess
    expect(down.previousReplicas).toBe(2);
    expect(model.hold).toEqual({ scaledDown: true, rememberedReplicas: { 'kube-controller-manager': 2 } });
    expect(held).toEqual([{ component: 'kube-controller-manager', desired: 2 }]);
    expect(model.replicas['kube-controller-manager']).toBe(0);
    expect(model.replicas['machine-controller-manager']).toBe(2);

    scaleModel(model, 'kube-controller-manager', 2);
    reconcileModel(model, { hibernated: false });
    expect(model.hold).toEqual({ scaledDown: false, rememberedReplicas: {} });
    expect(model.replicas['kube-controller-manager']).toBe(2);
  });

  it('kube-apiserver pods crash-loop without etcd; the others without kube-apiserver; they stay so until restarted', () => {
    // Prepare
    const model = awake();

    // Act
    observe(model, { etcdAvailable: false, apiServerAvailable: false });
    observe(model, { etcdAvailable: true, apiServerAvailable: true });

    // Assess
    expect(states(model, 'etcd')).toEqual(['Running']);
    expect(states(model, 'kube-apiserver')).toEqual(['CrashLoopBackOff']);
    expect(states(model, 'kube-controller-manager')).toEqual(['CrashLoopBackOff']);
  });

  it('only the API server outage: kube-apiserver keeps running, its dependents crash-loop', () => {
    const model = awake();
    observe(model, { etcdAvailable: true, apiServerAvailable: false });
    expect(states(model, 'kube-apiserver')).toEqual(['Running']);
    expect(states(model, 'kube-scheduler')).toEqual(['CrashLoopBackOff']);
    expect(states(model, 'etcd')).toEqual(['Running']);
  });

  it.each([
    {
      name: 'dependency back: a new Running pod',
      seen: { etcdAvailable: true, apiServerAvailable: true },
      restarted: true,
      state: 'Running',
    },
    {
      name: 'dependency still gone: crash-loops again',
      seen: { etcdAvailable: true, apiServerAvailable: false },
      restarted: true,
      state: 'CrashLoopBackOff',
    },
  ])('restart of a crash-looping pod ($name)', ({ seen, restarted, state }) => {
    // Prepare
    const model = awake();
    observe(model, { etcdAvailable: true, apiServerAvailable: false });
    const pod = model.pods.find((p) => p.component === 'kube-controller-manager')!;

    // Act
    const result = restartPod(model, pod.name, seen);

    // Assess
    expect(result).toEqual({ restarted, found: true });
    const fresh = model.pods.find((p) => p.component === 'kube-controller-manager')!;
    expect(fresh.name).not.toBe(pod.name);
    expect(fresh.state).toBe(state);
  });

  it('a restart of a Running or unknown pod does nothing', () => {
    const model = awake();
    const pod = model.pods[0]!;
    expect(restartPod(model, pod.name, { etcdAvailable: true, apiServerAvailable: true })).toEqual({
      restarted: false,
      found: true,
    });
    expect(restartPod(model, 'nope', { etcdAvailable: true, apiServerAvailable: true })).toEqual({
      restarted: false,
      found: false,
    });
  });

  it('reports components and pods without the internal component field', () => {
    const report = reportModel(awake());
    expect(report.components?.['kube-apiserver']).toEqual({ replicas: 1 });
    expect(report.pods?.[0]).not.toHaveProperty('component');
  });
});
