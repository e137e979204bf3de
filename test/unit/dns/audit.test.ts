import { describe, expect, it } from 'vitest';
import { auditApiRecord, InMemoryApiRecords, type ApiRecord } from '../../../core/dns/index.js';
import { MemoryGardenRepository } from '../../../core/garden/memory-repository.js';
import type { HostedControlPlane, Seed } from '../../../core/model/seed.js';
import type { Shoot } from '../../../core/model/shoot.js';
import { InMemoryOwnerRecords, runOwnershipAudit } from '../../../core/ownership/index.js';

const NOW = new Date('2025-01-01T00:10:00.000Z');
const API = 'api.api1.dev.shoots.test';

function seed(
  name: string,
  planes: Partial<HostedControlPlane>[],
  lastHeartbeatTime = '2025-01-01T00:09:30.000Z',
): Seed {
  return {
    apiVersion: 'core.gardenless.io/v1',
    kind: 'Seed',
    metadata: { name, resourceVersion: '', uid: name, creationTimestamp: '2025-01-01T00:00:00.000Z' },
    spec: {
      provider: { type: 'aws', region: 'eu-west-1', zones: ['eu-west-1a'] },
      networks: { pods: '10.1.0.0/16', services: '10.2.0.0/16' },
    },
    status: {
      identity: `${name}-id`,
      conditions: [],
      shoots: 0,
      labels: {},
      lastHeartbeatTime,
      controlPlanes: planes.map((p) => ({ technicalID: 'shoot--dev--api1', active: true, ...p })),
    },
  };
}

function shoot(seedName: string, lastOperation?: Shoot['status']['lastOperation']): Shoot {
  return {
    apiVersion: 'core.gardenless.io/v1',
    kind: 'Shoot',
    metadata: {
      name: 'api1',
      project: 'dev',
      resourceVersion: '',
      uid: 'api1',
      creationTimestamp: '2025-01-01T00:00:00.000Z',
    },
    spec: {
      provider: { type: 'aws' },
      region: 'eu-west-1',
      networking: { pods: '100.96.0.0/11', services: '100.64.0.0/13' },
    } as Shoot['spec'],
    status: {
      technicalID: 'shoot--dev--api1',
      seedName,
      conditions: [],
      constraints: [],
      ...(lastOperation ? { lastOperation } : {}),
    },
  };
}

const record = (type: ApiRecord['type'], value: string): ApiRecord => ({ name: API, type, value, ttl: 60 });
const seeds = (...list: Seed[]) => new Map(list.map((s) => [s.metadata.name, s]));
const A = seed('seed-a', [{ externalUrl: 'http://127.0.0.2:30443' }]);
const B = seed('seed-b', [{ technicalID: 'shoot--dev--other', externalUrl: 'http://127.0.0.3:30443' }]);

describe('auditApiRecord', () => {
  it('is quiet when the record names the load balancer of a seed hosting the shoot', () => {
    expect(
      auditApiRecord({ shoot: shoot('seed-a'), recordName: API, record: record('A', '127.0.0.2'), seeds: seeds(A, B) }),
    ).toBeUndefined();
  });

  it('reports a record that points at a seed that does not host the shoot, naming that seed', () => {
    expect(
      auditApiRecord({ shoot: shoot('seed-a'), recordName: API, record: record('A', '127.0.0.3'), seeds: seeds(A, B) }),
    ).toMatchObject({
      reason: 'ApiRecordPointsElsewhere',
      pointsAt: 'seed-b',
      seedName: 'seed-a',
      target: 'A 127.0.0.3',
      message: expect.stringContaining('seed seed-b, which does not host the shoot'),
    });
  });

  it('reports a record naming an address no seed reports', () => {
    expect(
      auditApiRecord({
        shoot: shoot('seed-a'),
        recordName: API,
        record: record('CNAME', 'gone.example'),
        seeds: seeds(A, B),
      }),
    ).toMatchObject({ reason: 'ApiRecordPointsElsewhere', pointsAt: null });
  });

  it('reports a missing record only while the placed seed serves', () => {
    expect(
      auditApiRecord({ shoot: shoot('seed-a'), recordName: API, record: undefined, seeds: seeds(A) }),
    ).toMatchObject({ reason: 'ApiRecordMissing' });
    expect(
      auditApiRecord({
        shoot: shoot('seed-a'),
        recordName: API,
        record: undefined,
        seeds: seeds(seed('seed-a', [{ active: false, externalUrl: 'http://127.0.0.2:1' }])),
      }),
    ).toBeUndefined();
  });

  it('leaves a shoot in a migration alone: its record follows the switch step', () => {
    const migrating = shoot('seed-a', {
      type: 'Restore',
      state: 'Processing',
      progress: 60,
      description: '',
      lastUpdateTime: NOW.toISOString(),
    });
    expect(
      auditApiRecord({ shoot: migrating, recordName: API, record: record('A', '127.0.0.3'), seeds: seeds(A, B) }),
    ).toBeUndefined();
  });
});

describe('runOwnershipAudit with API records', () => {
  it('reports the API record of a shoot that points at another seed, using fresh heartbeats only', async () => {
    // Prepare
    const repository = new MemoryGardenRepository({ clock: { now: () => NOW } });
    for (const s of [A, B, seed('seed-c', [{ externalUrl: 'http://127.0.0.4:30443' }], '2025-01-01T00:00:00.000Z')]) {
      await repository.createSeed(s);
      await repository.renewLease({
        seed: s.metadata.name,
        holderIdentity: s.status.identity,
        renewTime: s.status.lastHeartbeatTime!,
        leaseDurationSeconds: 3_600,
        conditions: [],
        controlPlanes: s.status.controlPlanes ?? [],
      });
    }
    await repository.createShoot(shoot('seed-a'));
    const records = new InMemoryApiRecords();
    // seed-c's report of the shoot is 10 minutes old: no evidence that it hosts the shoot now.
    await records.set({ name: API, target: { type: 'A', value: '127.0.0.4' } });
    // Act
    const report = await runOwnershipAudit({
      repository,
      records: new InMemoryOwnerRecords(),
      events: { publish: async () => {} },
      clock: { now: () => NOW },
      internalDomain: 'internal.test',
      apiRecords: { records, externalDomain: 'shoots.test' },
    });
    // Assess
    expect(report.apiRecordFindings).toEqual([
      expect.objectContaining({
        shoot: 'api1',
        reason: 'ApiRecordPointsElsewhere',
        target: 'A 127.0.0.4',
        pointsAt: null,
      }),
    ]);
  });
});
