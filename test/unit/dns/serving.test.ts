import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideCreate, decideSwitch, servingTarget, type ApiRecord, type Serving } from '../../../core/dns/index.js';
import type { HostedControlPlane, Seed } from '../../../core/model/index.js';
import { aSeed } from '../scheduling/fixtures.js';

const NOW = new Date('2026-02-01T12:00:00Z');
const T = 'shoot--dev--api1';

function hosting(
  plane: Partial<HostedControlPlane> | undefined,
  options: { name?: string; heartbeat?: Date | null } = {},
): Seed {
  const seed = aSeed({ name: options.name ?? 'destination' });
  const heartbeat = options.heartbeat === undefined ? new Date(NOW.getTime() - 2_000) : options.heartbeat;
  return {
    ...seed,
    status: {
      ...seed.status,
      ...(heartbeat ? { lastHeartbeatTime: heartbeat.toISOString(), leaseDurationSeconds: 30 } : {}),
      controlPlanes: plane ? [{ technicalID: T, active: true, externalUrl: 'http://127.0.0.3:31443', ...plane }] : [],
    },
  };
}

const record = (value: string, type: ApiRecord['type'] = 'A'): ApiRecord => ({
  name: 'api.api1.dev.shoots.example',
  type,
  value,
  ttl: 60,
});

describe('servingTarget', () => {
  it('serves when a fresh heartbeat reports the plane active with an address', () => {
    expect(servingTarget({ seed: hosting({}), technicalID: T, now: NOW })).toEqual({
      serving: true,
      seed: 'destination',
      target: { type: 'A', value: '127.0.0.3' },
      externalUrl: 'http://127.0.0.3:31443',
    });
  });

  it.each<[string, Seed | undefined, RegExp]>([
    ['an unknown seed', undefined, /not registered/],
    ['a seed that never heartbeated', hosting({}, { heartbeat: null }), /no valid lease/],
    ['an expired lease', hosting({}, { heartbeat: new Date(NOW.getTime() - 60_000) }), /no valid lease/],
    ['a seed that does not report the shoot', hosting(undefined), /does not report/],
    ['an inactive plane', hosting({ active: false }), /not active/],
    ['a kube-apiserver that does not answer ready', hosting({ internalProbe: 'Failure' }), /Failure, not ready/],
    [
      'a report from before the restore',
      hosting({ internalProbeTime: new Date(NOW.getTime() - 20_000).toISOString() }),
      /from before/,
    ],
  ])('does not serve with %s', (_case, seed, reason) => {
    const serving = servingTarget({ seed, technicalID: T, now: NOW, notBefore: new Date(NOW.getTime() - 10_000) });
    expect(serving.serving).toBe(false);
    expect(serving.serving ? '' : serving.reason).toMatch(reason);
  });

  it('serves without a target when the plane names no load balancer; the switch then leaves the record as it is', () => {
    const serving = servingTarget({ seed: hosting({ externalUrl: undefined }), technicalID: T, now: NOW });
    expect(serving).toEqual({ serving: true, seed: 'destination', target: undefined, externalUrl: undefined });
    expect(decideSwitch({ restored: true, destination: serving, current: record('127.0.0.2') })).toMatchObject({
      action: 'no-address',
      reason: expect.stringContaining('no load balancer'),
    });
  });
});

describe('decideSwitch', () => {
  const serving: Serving = {
    serving: true,
    seed: 'destination',
    target: { type: 'A', value: '127.0.0.3' },
    externalUrl: 'http://127.0.0.3:31443',
  };
  const notServing: Serving = {
    serving: false,
    seed: 'destination',
    reason: 'seed destination reports shoot--dev--api1 but not active',
  };

  it('keeps the record before the destination restored, even if it already reports serving', () => {
    expect(decideSwitch({ restored: false, destination: serving, current: record('127.0.0.2') }).action).toBe('keep');
  });

  it('leaves the record of a hibernated shoot as it is: nothing serves until it wakes', () => {
    expect(
      decideSwitch({ restored: true, destination: notServing, current: record('127.0.0.2'), hibernated: true }),
    ).toMatchObject({ action: 'no-address', reason: expect.stringContaining('hibernated') });
  });

  it('waits while the restored destination does not serve', () => {
    expect(decideSwitch({ restored: true, destination: notServing, current: record('127.0.0.2') })).toEqual({
      action: 'wait',
      reason: notServing.reason,
    });
  });

  it('switches from the source on condition that the record still points there', () => {
    expect(decideSwitch({ restored: true, destination: serving, current: record('127.0.0.2') })).toMatchObject({
      action: 'set',
      target: serving.target,
      expected: { type: 'A', value: '127.0.0.2' },
    });
  });

  it('creates a missing record on condition that it is still missing', () => {
    expect(decideSwitch({ restored: true, destination: serving, current: undefined })).toMatchObject({
      action: 'set',
      expected: null,
    });
  });

  it('is done when the record points at the destination already (a retried step)', () => {
    expect(decideSwitch({ restored: true, destination: serving, current: record('127.0.0.3') }).action).toBe('done');
  });

  it('changes the record type with the address', () => {
    const cname: Serving = { ...serving, target: { type: 'CNAME', value: 'lb.example.com' } };
    expect(decideSwitch({ restored: true, destination: cname, current: record('127.0.0.2') })).toMatchObject({
      action: 'set',
      target: { type: 'CNAME' },
      expected: { type: 'A' },
    });
  });

  /**
   * A model of a migration, on either path, that may stop at any step: the switch step runs (retried while
   * it waits) after the restore, and the destination may take some of those retries to start serving. The
   * record never points at the destination before it serves, and after a failure it points where the
   * serving control plane was.
   */
  it('never points at the destination before it serves; a failure leaves it where the serving plane was', () => {
    const STEPS = ['source-stops', 'restore', 'switch', 'finalize'] as const;
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: STEPS.length }),
        fc.integer({ min: 0, max: 12 }),
        (failAt, servesAfterAttempts) => {
          let current: ApiRecord | undefined = record('127.0.0.2');
          let restored = false;
          let attempts = 0;
          const destinationServes = () => restored && attempts >= servesAfterAttempts;
          let gaveUp = false;
          for (const step of STEPS.slice(0, failAt)) {
            if (step === 'restore') restored = true;
            if (step === 'switch') {
              // The state machine retries DestinationNotServing ten times, then the migration fails.
              for (; attempts < 10; attempts++) {
                const decision = decideSwitch({
                  restored,
                  destination: destinationServes() ? serving : notServing,
                  current,
                });
                if (decision.action === 'set') current = { ...current!, ...decision.target };
                if (decision.action !== 'wait') break;
              }
              gaveUp = attempts >= 10;
            }
            if (current?.value === '127.0.0.3') expect(destinationServes()).toBe(true);
            if (gaveUp) break;
          }
          const switched = failAt > STEPS.indexOf('switch') && !gaveUp;
          expect(current?.value).toBe(switched ? '127.0.0.3' : '127.0.0.2');
        },
      ),
    );
  });
});

describe('decideCreate', () => {
  it('waits until the placed seed serves, then sets the missing record', () => {
    expect(
      decideCreate({ serving: { serving: false, seed: 'source', reason: 'not yet' }, current: undefined }).action,
    ).toBe('wait');
    expect(
      decideCreate({
        serving: {
          serving: true,
          seed: 'source',
          target: { type: 'A', value: '127.0.0.2' },
          externalUrl: 'http://127.0.0.2:1',
        },
        current: undefined,
      }),
    ).toMatchObject({ action: 'set', expected: null });
  });
});
