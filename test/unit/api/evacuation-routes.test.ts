import { describe, expect, it } from 'vitest';
import type { Evacuation } from '../../../core/evacuation/record.js';
import { api, CALLERS } from './events.js';

const record: Evacuation = {
  apiVersion: 'core.gardenless.io/v1',
  kind: 'Evacuation',
  id: 'aws-eu1-1',
  seed: 'aws-eu1',
  lastRenewTime: '2026-01-01T00:00:00.000Z',
  lostSince: '2026-01-01T00:00:30.000Z',
  phase: 'Running',
  maxParallel: 5,
  createdAt: '2026-01-01T00:10:30.000Z',
  updatedAt: '2026-01-01T00:10:30.000Z',
  version: 1,
  shoots: [
    { project: 'dev', name: 'a', state: 'Migrating', priority: 0, destination: 'aws-eu2', migrationId: 'm1' },
    { project: 'dev', name: 'b', state: 'Pending', priority: 0 },
  ],
};

describe('the evacuation routes', () => {
  it("show the evacuations, one seed's, and 404 for a seed never evacuated", async () => {
    const a = api();
    await a.evacuationStore.put(record, undefined);
    expect(await a.send('GET', '/evacuations')).toMatchObject({
      status: 200,
      body: { items: [{ seed: 'aws-eu1', phase: 'Running' }] },
    });
    expect(await a.send('GET', '/evacuations', { query: { active: 'true' } })).toMatchObject({
      status: 200,
      body: { items: [{ seed: 'aws-eu1' }] },
    });
    expect(await a.send('GET', '/seeds/aws-eu1/evacuation', { caller: CALLERS.viewer })).toMatchObject({
      status: 200,
      body: { shoots: [{ name: 'a' }, { name: 'b' }] },
    });
    expect(await a.send('GET', '/seeds/aws-eu9/evacuation')).toMatchObject({ status: 404, body: { code: 'NotFound' } });
    expect(await a.send('GET', '/evacuations', { query: { active: 'maybe' } })).toMatchObject({ status: 400 });
    expect(await a.send('GET', '/seeds/Not_A_Name/evacuation')).toMatchObject({ status: 400 });
  });

  it('pause, resume and cancel: 200 with the record, 409 where the phase does not allow it, versions bumped', async () => {
    const a = api();
    await a.evacuationStore.put(record, undefined);
    expect(await a.send('POST', '/seeds/aws-eu1/evacuation/pause')).toMatchObject({
      status: 200,
      body: { phase: 'Paused', version: 2, reason: expect.stringMatching(/^paused by operator/) },
    });
    expect(await a.send('POST', '/seeds/aws-eu1/evacuation/pause')).toMatchObject({
      status: 200,
      body: { phase: 'Paused', version: 2 },
    });
    expect(await a.send('POST', '/seeds/aws-eu1/evacuation/resume')).toMatchObject({
      status: 200,
      body: { phase: 'Running', version: 3 },
    });
    expect(await a.send('POST', '/seeds/aws-eu1/evacuation/cancel')).toMatchObject({
      status: 200,
      body: { phase: 'Cancelling', version: 4 },
    });
    expect(await a.send('POST', '/seeds/aws-eu1/evacuation/resume')).toMatchObject({
      status: 409,
      body: { code: 'EvacuationNotControllable' },
    });
    expect(await a.send('POST', '/seeds/aws-eu9/evacuation/cancel')).toMatchObject({ status: 404 });
    expect(await a.send('POST', '/seeds/aws-eu1/evacuation/pause', { caller: CALLERS.viewer })).toMatchObject({
      status: 403,
    });
    expect((await a.evacuationStore.get('aws-eu1'))!.version).toBe(4);
  });
});
