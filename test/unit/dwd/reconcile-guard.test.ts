import { describe, expect, it } from 'vitest';
import {
  CLUSTER_AUTOSCALER,
  KUBE_APISERVER,
  KUBE_CONTROLLER_MANAGER,
  MACHINE_CONTROLLER_MANAGER,
  isHeld,
  reconcileReplicas,
  type WatchdogHold,
} from '../../../core/dwd/index.js';

const desired = {
  [KUBE_APISERVER]: 3,
  [KUBE_CONTROLLER_MANAGER]: 2,
  [MACHINE_CONTROLLER_MANAGER]: 1,
  [CLUSTER_AUTOSCALER]: 1,
};

describe('reconcileReplicas', () => {
  it.each<{ name: string; hold: WatchdogHold | undefined; replicas: Record<string, number>; held: string[] }>([
    { name: 'no watchdog state', hold: undefined, replicas: desired, held: [] },
    { name: 'nothing held', hold: { scaledDown: false, rememberedReplicas: {} }, replicas: desired, held: [] },
    {
      name: 'all three held',
      hold: {
        scaledDown: true,
        rememberedReplicas: { [KUBE_CONTROLLER_MANAGER]: 2, [MACHINE_CONTROLLER_MANAGER]: 1, [CLUSTER_AUTOSCALER]: 1 },
      },
      replicas: { ...desired, [KUBE_CONTROLLER_MANAGER]: 0, [MACHINE_CONTROLLER_MANAGER]: 0, [CLUSTER_AUTOSCALER]: 0 },
      held: [KUBE_CONTROLLER_MANAGER, MACHINE_CONTROLLER_MANAGER, CLUSTER_AUTOSCALER],
    },
    {
      name: 'only what the watchdog took is held',
      hold: { scaledDown: true, rememberedReplicas: { [KUBE_CONTROLLER_MANAGER]: 2 } },
      replicas: { ...desired, [KUBE_CONTROLLER_MANAGER]: 0 },
      held: [KUBE_CONTROLLER_MANAGER],
    },
  ])('$name', ({ hold, replicas, held }) => {
    // Act
    const result = reconcileReplicas(desired, hold);

    // Assess
    expect(result.replicas).toEqual(replicas);
    expect(result.held.map((h) => h.component)).toEqual(held);
  });

  it('reports what the reconcile wanted for a held component', () => {
    const result = reconcileReplicas(
      { [KUBE_CONTROLLER_MANAGER]: 4 },
      { scaledDown: true, rememberedReplicas: { [KUBE_CONTROLLER_MANAGER]: 2 } },
    );
    expect(result.held).toEqual([{ component: KUBE_CONTROLLER_MANAGER, desired: 4 }]);
  });

  it('does not mutate the desired replicas', () => {
    const input = { ...desired };
    reconcileReplicas(input, { scaledDown: true, rememberedReplicas: { [KUBE_CONTROLLER_MANAGER]: 2 } });
    expect(input).toEqual(desired);
  });

  it.each([
    { component: KUBE_CONTROLLER_MANAGER, expected: true },
    { component: CLUSTER_AUTOSCALER, expected: false },
    { component: 'toString', expected: false },
  ])('isHeld($component) is $expected', ({ component, expected }) => {
    expect(isHeld(component, { scaledDown: true, rememberedReplicas: { [KUBE_CONTROLLER_MANAGER]: 1 } })).toBe(
      expected,
    );
  });
});
