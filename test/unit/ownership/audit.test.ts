import { describe, expect, it } from 'vitest';
import { MemoryGardenRepository } from '../../../core/garden/memory-repository.js';
import type { Seed } from '../../../core/model/seed.js';
import type { Shoot } from '../../../core/model/shoot.js';
import {
  FailingOwnerRecords,
  InMemoryOwnerRecords,
  ownerRecordName,
  OwnerRecordsUnavailableError,
  runOwnershipAudit,
} from '../../../core/ownership/index.js';

const NOW = new Date('2025-01-01T00:10:00.000Z');
const DOMAIN = 'internal.gardenless.test';

function seed(
  name: string,
  controlPlanes: { technicalID: string; active: boolean }[] = [],
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
    status: { identity: `${name}-id`, conditions: [], shoots: 0, labels: {}, lastHeartbeatTime, controlPlanes },
  };
}

function shoot(name: string, seedName: string | undefined, lastOperation?: Shoot['status']['lastOperation']): Shoot {
  return {
    apiVersion: 'core.gardenless.io/v1',
    kind: 'Shoot',
    metadata: { name, project: 'dev', resourceVersion: '', uid: name, creationTimestamp: '2025-01-01T00:00:00.000Z' },
    spec: {
      provider: { type: 'aws' },
      region: 'eu-west-1',
      networking: { pods: '100.96.0.0/11', services: '100.64.0.0/13' },
    } as Shoot['spec'],
    status: {
      technicalID: `shoot--dev--${name}`,
      ...(seedName ? { seedName } : {}),
      conditions: [],
      constraints: [],
      ...(lastOperation ? { lastOperation } : {}),
    },
  };
}

async function world(options: { seeds: Seed[]; shoots: Shoot[]; records: Record<string, string> }) {
  const repository = new MemoryGardenRepository({ clock: { now: () => NOW } });
  for (const s of options.seeds) {
    await repository.createSeed(s);
    // What the seed's agent last reported lives in its lease (an hour long here: the audit judges the report's age itself).
    const { lastHeartbeatTime, controlPlanes } = s.status;
    if (lastHeartbeatTime)
      await repository.renewLease({
        seed: s.metadata.name,
        holderIdentity: s.status.identity,
        renewTime: lastHeartbeatTime,
        leaseDurationSeconds: 3_600,
        conditions: [],
        controlPlanes: controlPlanes ?? [],
      });
  }
  for (const s of options.shoots) await repository.createShoot(s);
  const records = new InMemoryOwnerRecords();
  for (const [shootName, value] of Object.entries(options.records))
    await records.set({ name: ownerRecordName({ shoot: shootName, project: 'dev', internalDomain: DOMAIN }), value });
  const published: { detailType: string; detail: Record<string, unknown> }[] = [];
  const events = {
    publish: async (detailType: string, detail: Record<string, unknown>) => void published.push({ detailType, detail }),
  };
  const audit = () =>
    runOwnershipAudit({ repository, records, events, clock: { now: () => NOW }, internalDomain: DOMAIN, pageSize: 2 });
  return { repository, records, published, audit };
}

const condition = async (repository: MemoryGardenRepository, name: string) =>
  (await repository.getShoot('dev', name))?.status.conditions.find((c) => c.type === 'OwnershipConsistent');

describe('runOwnershipAudit', () => {
  it.each([
    [
      'record, placement and heartbeat agree',
      { s: 'a-id' },
      [seed('a', [{ technicalID: 'shoot--dev--s', active: true }]), seed('b')],
      undefined,
      'Consistent',
    ],
    ['the record names another seed', { s: 'b-id' }, [seed('a'), seed('b')], undefined, 'OwnerRecordMismatch'],
    ['no record', {}, [seed('a'), seed('b')], undefined, 'OwnerRecordMissing'],
    [
      'another seed serves it',
      { s: 'a-id' },
      [seed('a'), seed('b', [{ technicalID: 'shoot--dev--s', active: true }])],
      undefined,
      'ActiveOnOtherSeed',
    ],
    [
      'two seeds serve it',
      { s: 'a-id' },
      [
        seed('a', [{ technicalID: 'shoot--dev--s', active: true }]),
        seed('b', [{ technicalID: 'shoot--dev--s', active: true }]),
      ],
      undefined,
      'ActiveOnSeveralSeeds',
    ],
    [
      'two seeds serve it during a migration',
      { s: 'b-id' },
      [
        seed('a', [{ technicalID: 'shoot--dev--s', active: true }]),
        seed('b', [{ technicalID: 'shoot--dev--s', active: true }]),
      ],
      'Migrate',
      'ActiveOnSeveralSeeds',
    ],
    [
      'a migration moved the record first',
      { s: 'b-id' },
      [seed('a', [{ technicalID: 'shoot--dev--s', active: true }]), seed('b')],
      'Migrate',
      'Consistent',
    ],
    [
      'a stale heartbeat of another seed',
      { s: 'a-id' },
      [seed('a'), seed('b', [{ technicalID: 'shoot--dev--s', active: true }], '2025-01-01T00:00:00.000Z')],
      undefined,
      'Consistent',
    ],
  ] as const)('%s: %s', async (_, recordsFor, seeds, op, reason) => {
    // Prepare
    const records: Record<string, string> = { ...recordsFor };
    const lastOperation = op
      ? { type: op, state: 'Processing' as const, progress: 50, description: '', lastUpdateTime: NOW.toISOString() }
      : undefined;
    const w = await world({ seeds: [...seeds], shoots: [shoot('s', 'a', lastOperation)], records });

    // Act
    const report = await w.audit();

    // Assess
    const consistent = reason === 'Consistent';
    expect(report).toMatchObject({
      shoots: 1,
      audited: 1,
      consistent: consistent ? 1 : 0,
      inconsistent: consistent ? 0 : 1,
    });
    expect(w.published.map((e) => [e.detailType, e.detail.reason])).toEqual(
      consistent ? [] : [['SplitBrainSuspected', reason]],
    );
    expect(await condition(w.repository, 's')).toEqual(
      consistent ? undefined : expect.objectContaining({ status: 'False', reason }),
    );
  });

  it('publishes once per change, turns the condition True when repaired, and pages through everything', async () => {
    const shoots = Array.from({ length: 5 }, (_, i) => shoot(`s${i}`, 'a'));
    const w = await world({
      seeds: [seed('a'), seed('b'), seed('c')],
      shoots,
      records: Object.fromEntries(shoots.map((s) => [s.metadata.name, 'a-id'])),
    });
    await w.records.set({
      name: ownerRecordName({ shoot: 's3', project: 'dev', internalDomain: DOMAIN }),
      value: 'b-id',
    });

    expect(await w.audit()).toMatchObject({
      shoots: 5,
      inconsistent: 1,
      eventsPublished: 1,
      conditionsWritten: 1,
      recordPages: 1,
    });
    expect(await w.audit()).toMatchObject({ inconsistent: 1, eventsPublished: 0, conditionsWritten: 0 });
    await w.records.set({
      name: ownerRecordName({ shoot: 's3', project: 'dev', internalDomain: DOMAIN }),
      value: 'a-id',
    });
    expect(await w.audit()).toMatchObject({ inconsistent: 0, eventsPublished: 0, conditionsWritten: 1 });
    expect(await condition(w.repository, 's3')).toMatchObject({ status: 'True', reason: 'Consistent' });
    expect(w.published).toHaveLength(1);
  });

  it('leaves unscheduled shoots without records alone', async () => {
    const w = await world({ seeds: [seed('a')], shoots: [shoot('u', undefined)], records: {} });
    expect(await w.audit()).toMatchObject({ shoots: 1, audited: 0 });
  });

  it('fails the round when owner records cannot be read, instead of reporting every shoot', async () => {
    const w = await world({ seeds: [seed('a')], shoots: [shoot('s', 'a')], records: {} });
    const report = runOwnershipAudit({
      repository: w.repository,
      records: new FailingOwnerRecords(),
      events: { publish: async () => {} },
      clock: { now: () => NOW },
      internalDomain: DOMAIN,
    });
    await expect(report).rejects.toBeInstanceOf(OwnerRecordsUnavailableError);
  });
});

describe('a seed whose lease expired (its agent lost)', () => {
  it('is no evidence: its last report does not make a bad-case migration a split brain; its next fresh report is', async () => {
    // Prepare: the shoot moved to b on the bad path; a's agent died 100 s ago with a 6 s lease, its last report saying active.
    const source = seed(
      'a',
      [{ technicalID: 'shoot--dev--s', active: true }],
      new Date(NOW.getTime() - 100_000).toISOString(),
    );
    const w = await world({
      seeds: [seed('b', [{ technicalID: 'shoot--dev--s', active: true }])],
      shoots: [shoot('s', 'b')],
      records: { s: 'b-id' },
    });
    await w.repository.createSeed(source);
    await w.repository.renewLease({
      seed: 'a',
      holderIdentity: 'a-id',
      renewTime: source.status.lastHeartbeatTime!,
      leaseDurationSeconds: 6,
      conditions: [],
      controlPlanes: source.status.controlPlanes!,
    });
    // Act + Assess: consistent, a listed as stale, nothing published.
    const quiet = await w.audit();
    expect(quiet.findings).toEqual([]);
    expect(quiet.staleSeeds).toEqual(['a']);
    expect(w.published).toEqual([]);
    // a's agent is back and still reports the plane active: that is a split brain.
    await w.repository.renewLease({
      seed: 'a',
      holderIdentity: 'a-id',
      renewTime: NOW.toISOString(),
      leaseDurationSeconds: 6,
      conditions: [],
      controlPlanes: source.status.controlPlanes!,
    });
    const loud = await w.audit();
    expect(loud.findings).toMatchObject([{ shoot: 's', reason: 'ActiveOnSeveralSeeds' }]);
  });
});

describe('leftover control planes in the audit', () => {
  const moved = (minutesAgo: number) => ({
    type: 'Restore' as const,
    state: 'Succeeded' as const,
    progress: 100,
    description: '',
    lastUpdateTime: new Date(NOW.getTime() - minutesAgo * 60_000).toISOString(),
  });

  it.each([
    [
      'reported by the old source three minutes after the migration',
      3,
      [
        seed('a', [{ technicalID: 'shoot--dev--s', active: false }]),
        seed('b', [{ technicalID: 'shoot--dev--s', active: true }]),
      ],
      ['a'],
    ],
    [
      'within the two-minute bound after the migration',
      1,
      [
        seed('a', [{ technicalID: 'shoot--dev--s', active: false }]),
        seed('b', [{ technicalID: 'shoot--dev--s', active: true }]),
      ],
      [],
    ],
    ['removed by the old source', 3, [seed('a'), seed('b', [{ technicalID: 'shoot--dev--s', active: true }])], []],
    [
      'reported by a stale heartbeat only',
      3,
      [
        seed('a', [{ technicalID: 'shoot--dev--s', active: false }], '2025-01-01T00:00:00.000Z'),
        seed('b', [{ technicalID: 'shoot--dev--s', active: true }]),
      ],
      [],
    ],
  ] as const)('%s', async (_, minutesAgo, seeds, expected) => {
    const w = await world({ seeds: [...seeds], shoots: [shoot('s', 'b', moved(minutesAgo))], records: { s: 'b-id' } });
    const report = await w.audit();
    expect(report.leftovers.map((l) => l.seed)).toEqual(expected);
    if (expected.length > 0)
      expect(report.leftovers[0]).toMatchObject({
        technicalID: 'shoot--dev--s',
        placedOn: 'b',
        since: moved(minutesAgo).lastUpdateTime,
      });
  });
});
