import { describe, expect, it } from 'vitest';
import type { ComponentName } from '../../../core/ha/layout.js';
import {
  controllers,
  HOSTED_CONTROLLERS,
  notHosted,
  pollUntil,
  type DeployWaiter,
} from '../../../seed/agent/components.js';
import type { ControlPlaneComponents } from '../../../seed/agent/hosting.js';
import {
  CONTROLLERS,
  deployKube,
  destroyAll,
  destroyKube,
  waitKubeCleanup,
} from '../../../seed/agent/control-plane-flow.js';
import { ComponentWaitError } from '../../../seed/agent/errors.js';

/** Components that record every call as `<method> <component> [<spec>]`, in the order they were made. */
function recording(): { components: ControlPlaneComponents; calls: string[] } {
  const calls: string[] = [];
  const component = <Spec>(name: ComponentName): DeployWaiter<Spec> => ({
    name,
    deploy: async (spec) => void calls.push(`deploy ${name} ${JSON.stringify(spec)}`),
    destroy: async () => void calls.push(`destroy ${name}`),
    wait: async () => void calls.push(`wait ${name}`),
    waitCleanup: async () => void calls.push(`waitCleanup ${name}`),
  });
  return {
    calls,
    components: {
      etcd: {
        ...component('etcd'),
        name: 'etcd',
        deploy: async () => (calls.push('deploy etcd'), {}),
        snapshot: async () => void calls.push('snapshot etcd'),
      },
      'kube-apiserver': component('kube-apiserver'),
      controllers: controllers((name) => component(name)),
    },
  };
}

describe('the control plane flow', () => {
  it('deploys kube-apiserver before every controller a seed runs, each at its replicas', async () => {
    // Prepare
    const { components, calls } = recording();

    // Act
    await deployKube(components, {
      apiDomain: 'api.web.dev.example.com',
      replicas: { 'kube-apiserver': 1, 'kube-controller-manager': 0, 'kube-scheduler': 1 },
      remembered: { 'kube-controller-manager': 2 },
    });

    // Assess: kube-apiserver first; the controller the watchdog holds keeps its memory; the others are not run.
    expect(calls[0]).toBe('deploy kube-apiserver {"apiDomain":"api.web.dev.example.com","replicas":1}');
    expect(calls.slice(1).sort()).toEqual([
      'deploy kube-controller-manager {"replicas":0,"remembered":2}',
      'deploy kube-scheduler {"replicas":1}',
    ]);
  });

  it("gives a controller the layout's replicas where none are named, and none on a standby", async () => {
    const plain = recording();
    const standby = recording();

    await deployKube(plain.components, { failureTolerance: 'zone' });
    await deployKube(standby.components, { standby: true, replicas: { 'kube-scheduler': 1 } });

    expect(plain.calls).toContain('deploy kube-scheduler {"replicas":2,"failureTolerance":"zone"}');
    expect(plain.calls[0]).toBe('deploy kube-apiserver {"failureTolerance":"zone"}');
    expect(standby.calls).toEqual([
      'deploy kube-apiserver {"standby":true}',
      'deploy kube-controller-manager {"replicas":0}',
      'deploy kube-scheduler {"replicas":0}',
    ]);
  });

  it('destroys the controllers before kube-apiserver, and etcd last', async () => {
    const { components, calls } = recording();

    await destroyAll(components);

    expect(calls.at(-2)).toBe('destroy kube-apiserver');
    expect(calls.at(-1)).toBe('destroy etcd');
    expect(calls.slice(0, -2).sort()).toEqual(['destroy kube-controller-manager', 'destroy kube-scheduler']);
  });

  it('waits for the controllers to be gone, then kube-apiserver; destroyKube leaves etcd alone', async () => {
    const { components, calls } = recording();

    await destroyKube(components);
    await waitKubeCleanup(components, { timeoutMs: 1_000 });

    expect(calls).not.toContain('destroy etcd');
    expect(calls.at(-1)).toBe('waitCleanup kube-apiserver');
  });
});

describe('the components', () => {
  it('lays out every controller, and runs exactly the hosted ones', () => {
    const made: string[] = [];
    const all = controllers((name) => {
      made.push(name);
      return notHosted(name);
    });

    expect(Object.keys(all).sort()).toEqual([...CONTROLLERS].sort());
    expect(made).toEqual([...HOSTED_CONTROLLERS]);
  });

  it('a component no seed runs changes nothing, is always cleaned up, and is no thing to wait for', async () => {
    const component = notHosted<{ replicas: number }>('cluster-autoscaler');

    await component.deploy({ replicas: 2 });
    await component.destroy();
    await component.waitCleanup({ timeoutMs: 1 });

    await expect(component.wait({ timeoutMs: 1 })).rejects.toThrow(/does not run on this seed/);
  });

  it('a wait polls until done, and fails with what it waited for once the time is up or the signal aborts', async () => {
    let polls = 0;
    await pollUntil(async () => ++polls === 3, { timeoutMs: 5_000, intervalMs: 1, describe: () => 'never' });
    expect(polls).toBe(3);

    await expect(
      pollUntil(async () => false, { timeoutMs: 20, intervalMs: 5, describe: () => 'kube-apiserver is not ready' }),
    ).rejects.toThrow(new ComponentWaitError('kube-apiserver is not ready'));
    const aborted = AbortSignal.abort();
    await expect(
      pollUntil(async () => false, { timeoutMs: 60_000, signal: aborted, describe: () => 'aborted' }),
    ).rejects.toBeInstanceOf(ComponentWaitError);
  });
});
