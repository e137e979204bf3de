import { describe, expect, it } from 'vitest';
import type { Seed, ShootSpec } from '../../../core/model/index.js';
import {
  COMPONENTS,
  chooseZones,
  controlPlaneLayout,
  layoutObjects,
  replicasFor,
  type ComponentName,
  type LayoutOptions,
} from '../../../core/ha/index.js';
import { aSeed, aShoot, ha } from '../scheduling/fixtures.js';

const ID = 'shoot--dev--api1';
const ZONES = ['eu-west-1a', 'eu-west-1b', 'eu-west-1c'];

function multiZonalSeed(zones = ZONES): Seed {
  return aSeed({
    name: 'multi',
    multiZonal: true,
    zones,
    workerPools: [{ name: 'cp', zones, minimum: 3, taints: [] }],
  });
}

function layout(spec: Partial<ShootSpec>, seed: Seed, extra: Partial<LayoutOptions> = {}) {
  return controlPlaneLayout({ shoot: aShoot(spec), seed, ...extra });
}

function component(l: ReturnType<typeof controlPlaneLayout>, name: ComponentName) {
  return l.components.find((c) => c.name === name)!;
}

const selector = (app: string) => ({ matchLabels: { app, 'gardener.cloud/shoot': ID } });

describe('replicas (docs/design.md section 7)', () => {
  it.each([
    ['etcd', undefined, 1],
    ['etcd', 'node', 3],
    ['etcd', 'zone', 3],
    ['kube-apiserver', undefined, 1],
    ['kube-apiserver', 'node', 3],
    ['kube-apiserver', 'zone', 3],
    ['gardener-resource-manager', undefined, 1],
    ['gardener-resource-manager', 'zone', 3],
    ['kube-controller-manager', undefined, 1],
    ['kube-controller-manager', 'node', 2],
    ['kube-scheduler', 'zone', 2],
    ['machine-controller-manager', 'node', 2],
    ['cluster-autoscaler', 'zone', 2],
  ] as const)('%s with tolerance %s: %i', (name, tolerance, replicas) => {
    expect(replicasFor(name, tolerance)).toBe(replicas);
  });

  it('scales kube-apiserver out but never below 3 when HA', () => {
    expect(replicasFor('kube-apiserver', 'zone', 5)).toBe(5);
    expect(replicasFor('kube-apiserver', 'zone', 2)).toBe(3);
  });
});

describe('every component', () => {
  it.each([undefined, 'node', 'zone'] as const)(
    'has a PDB with maxUnavailable 1 and the shoot label (tolerance %s)',
    (tolerance) => {
      // Act
      const l = layout(tolerance ? ha(tolerance) : {}, multiZonalSeed());

      // Assess
      expect(l.components.map((c) => c.name)).toEqual([...COMPONENTS]);
      for (const c of l.components) {
        expect(c.podDisruptionBudget).toEqual({
          apiVersion: 'policy/v1',
          kind: 'PodDisruptionBudget',
          metadata: {
            name: c.name,
            namespace: ID,
            labels: { app: c.name, 'gardener.cloud/shoot': ID, 'gardener.cloud/role': 'controlplane' },
          },
          spec: { maxUnavailable: 1, selector: selector(c.name), unhealthyPodEvictionPolicy: 'AlwaysAllow' },
        });
        expect(c.workload.metadata.labels['gardener.cloud/shoot']).toBe(ID);
        expect(c.workload.spec.template.metadata.labels['gardener.cloud/shoot']).toBe(ID);
        expect(c.workload.spec.replicas).toBe(c.replicas);
        expect(c.workload.kind).toBe(c.name === 'etcd' ? 'StatefulSet' : 'Deployment');
      }
      expect(layoutObjects(l)).toHaveLength(2 * COMPONENTS.length);
    },
  );
});

describe('GEP-20 "Single-Zone"', () => {
  it('gives etcd a hostname anti-affinity: one member per node', () => {
    // Act
    const etcd = component(layout(ha('node'), aSeed()), 'etcd');

    // Assess
    expect(etcd.case).toBe('single-zone');
    expect(etcd.workload.spec.template.spec).toEqual({
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { labelSelector: selector('etcd'), topologyKey: 'kubernetes.io/hostname' },
          ],
        },
      },
    });
  });

  it('spreads the other components over nodes with maxSkew 1', () => {
    // Act
    const kcm = component(layout(ha('node'), aSeed()), 'kube-controller-manager');

    // Assess
    expect(kcm.workload.spec.template.spec).toEqual({
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: 'kubernetes.io/hostname',
          whenUnsatisfiable: 'DoNotSchedule',
          labelSelector: selector('kube-controller-manager'),
        },
      ],
    });
  });

  it('spreads a scaled-out non-HA kube-apiserver on a best-effort basis only', () => {
    const api = component(layout({}, aSeed(), { apiServerReplicas: 2 }), 'kube-apiserver');
    expect(api.workload.spec.template.spec.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'kubernetes.io/hostname',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: selector('kube-apiserver'),
      },
    ]);
  });

  it('adds nothing to spread for a single replica on a single-zone seed', () => {
    // Act
    const l = layout({}, aSeed());

    // Assess
    expect(l.zonePinned).toBe(false);
    for (const c of l.components) {
      expect(c.case).toBe('single-replica');
      expect(c.workload.spec.template.spec).toEqual({});
    }
  });
});

describe('GEP-20 "Zone Pinning"', () => {
  it.each([
    ['node', ha('node')],
    ['none', {}],
  ])('pins a %s-tolerance control plane on a multi-zonal seed into one zone', (_name, spec) => {
    // Act
    const l = layout(spec, multiZonalSeed());

    // Assess
    expect(l.zonePinned).toBe(true);
    expect(l.zones).toHaveLength(1);
    expect(ZONES).toContain(l.zones[0]);
    for (const c of l.components) {
      expect(c.workload.spec.template.spec.affinity?.podAffinity).toEqual({
        requiredDuringSchedulingIgnoredDuringExecution: [
          {
            labelSelector: { matchLabels: { 'gardener.cloud/shoot': ID } },
            topologyKey: 'topology.kubernetes.io/zone',
          },
        ],
      });
      expect(c.workload.spec.template.spec.affinity?.nodeAffinity).toEqual({
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: l.zones }] },
          ],
        },
      });
    }
  });

  it('keeps the node spread of etcd inside the pinned zone', () => {
    const etcd = component(layout(ha('node'), multiZonalSeed()), 'etcd');
    expect(etcd.case).toBe('single-zone');
    expect(
      etcd.workload.spec.template.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution[0]
        ?.topologyKey,
    ).toBe('kubernetes.io/hostname');
  });
});

describe('GEP-20 "Multi-Zone (#replicas <= #zones)"', () => {
  it.each(['etcd', 'kube-apiserver', 'gardener-resource-manager', 'kube-scheduler'] as const)(
    'gives %s a zone anti-affinity',
    (name) => {
      // Act
      const l = layout(ha('zone'), multiZonalSeed());
      const c = component(l, name);

      // Assess
      expect(c.case).toBe('multi-zone');
      expect(c.workload.spec.template.spec.affinity?.podAntiAffinity).toEqual({
        requiredDuringSchedulingIgnoredDuringExecution: [
          { labelSelector: selector(name), topologyKey: 'topology.kubernetes.io/zone' },
        ],
      });
      expect(
        c.workload.spec.template.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
          .nodeSelectorTerms[0]?.matchExpressions[0]?.values,
      ).toEqual(ZONES);
      expect(c.workload.spec.template.spec.affinity?.podAffinity).toBeUndefined();
      expect(c.workload.spec.template.spec.topologySpreadConstraints).toBeUndefined();
    },
  );
});

describe('GEP-20 "Multi-Zone (#replicas > #zones)"', () => {
  it('spreads kube-apiserver over zones with maxSkew 2 and nodes with maxSkew 1, with a rollout version', () => {
    // Act
    const api = component(
      layout(ha('zone'), multiZonalSeed(), { apiServerReplicas: 5, rolloutVersion: '7' }),
      'kube-apiserver',
    );

    // Assess
    const versioned = {
      matchLabels: { app: 'kube-apiserver', 'gardener.cloud/shoot': ID, 'gardener.cloud/rolloutVersion': '7' },
    };
    expect(api.case).toBe('multi-zone-overflow');
    expect(api.replicas).toBe(5);
    expect(api.workload.spec.template.spec.topologySpreadConstraints).toEqual([
      {
        maxSkew: 2,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: versioned,
      },
      {
        maxSkew: 1,
        topologyKey: 'kubernetes.io/hostname',
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: versioned,
      },
    ]);
    expect(api.workload.spec.template.metadata.labels['gardener.cloud/rolloutVersion']).toBe('7');
    expect(api.workload.spec.template.spec.affinity?.podAntiAffinity).toBeUndefined();
    // The workload selector stays stable across rollouts; only the spread counts per version.
    expect(api.workload.spec.selector).toEqual(selector('kube-apiserver'));
  });

  it('derives a rollout version that changes when the spread inputs change', () => {
    // Act
    const five = component(layout(ha('zone'), multiZonalSeed(), { apiServerReplicas: 5 }), 'kube-apiserver');
    const fiveAgain = component(layout(ha('zone'), multiZonalSeed(), { apiServerReplicas: 5 }), 'kube-apiserver');
    const six = component(layout(ha('zone'), multiZonalSeed(), { apiServerReplicas: 6 }), 'kube-apiserver');

    // Assess
    const version = (c: typeof five) => c.workload.spec.template.metadata.labels['gardener.cloud/rolloutVersion'];
    expect(version(five)).toMatch(/^r[0-9a-z]+$/);
    expect(version(fiveAgain)).toBe(version(five));
    expect(version(six)).not.toBe(version(five));
  });
});

describe('zones', () => {
  it('spreads a zone control plane over three zones of the multi-zonal pools on a five-zone seed', () => {
    // Prepare
    const zones = ['z1', 'z2', 'z3', 'z4', 'z5'];
    const seed = aSeed({
      name: 'five',
      multiZonal: true,
      zones,
      workerPools: [{ name: 'cp', zones, minimum: 5, taints: [] }],
    });

    // Act
    const l = layout(ha('zone'), seed);

    // Assess
    expect(l.zones).toHaveLength(3);
    expect(new Set(l.zones).size).toBe(3);
    for (const z of l.zones) expect(zones).toContain(z);
    expect(component(l, 'etcd').case).toBe('multi-zone');
  });

  it('chooses zones deterministically from the technical ID and spreads shoots over zones', () => {
    // Prepare
    const spec = { provider: { type: 'aws', region: 'r', zones: ['a', 'b', 'c'] } };

    // Act
    const picks = Array.from({ length: 60 }, (_, k) => chooseZones(spec, `shoot--p--s${k}`, 'node')[0]);

    // Assess
    expect(chooseZones(spec, 'shoot--p--s1', 'node')).toEqual(chooseZones(spec, 'shoot--p--s1', 'node'));
    expect(new Set(picks)).toEqual(new Set(['a', 'b', 'c']));
  });

  it('keeps zones chosen earlier', () => {
    const l = layout(ha('node'), multiZonalSeed(), { zones: ['eu-west-1b'] });
    expect(l.zones).toEqual(['eu-west-1b']);
    expect(
      component(l, 'etcd').workload.spec.template.spec.affinity?.nodeAffinity
        ?.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]?.matchExpressions[0]?.values,
    ).toEqual(['eu-west-1b']);
  });
});

describe('hibernation', () => {
  it('scales every component to zero and keeps its constraints for waking up', () => {
    // Act
    const l = layout({ ...ha('zone'), hibernation: { enabled: true } }, multiZonalSeed());

    // Assess
    for (const c of l.components) expect(c.workload.spec.replicas).toBe(0);
    expect(component(l, 'etcd').case).toBe('multi-zone');
    expect(component(l, 'etcd').workload.spec.template.spec.affinity?.podAntiAffinity).toBeDefined();
  });
});
