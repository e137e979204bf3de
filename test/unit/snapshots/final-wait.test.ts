import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SidecarSettings } from '../../../core/model/seed.js';
import { DEFAULT_SIDECAR_SETTINGS } from '../../../harness/fixtures/index.js';
import { fenceBound, FenceBoundError, type OwnershipTimings } from '../../../core/ownership/index.js';
import {
  DEFAULT_GUARD_REACTION_MS,
  finalWait,
  slowestSettings,
  sourceTimings,
  type FinalWaitInput,
} from '../../../core/snapshots/index.js';

const S = 1_000;
const OC = Date.parse('2026-03-01T12:00:00Z');
const DEFAULTS: SidecarSettings = DEFAULT_SIDECAR_SETTINGS;
/** The fence bound at the defaults: 10 + 5 + 5 + 30 + 10 s. */
const FB = 60 * S;
/** The S3/S4 loss bound at the defaults: the limit plus the guard's reaction. */
const LOSS = 50 * S + DEFAULT_GUARD_REACTION_MS;

const base = (o: Partial<FinalWaitInput> = {}): FinalWaitInput => ({
  ownerChangedAt: OC,
  copyStartedAt: OC + 2 * S,
  reported: DEFAULTS,
  ...o,
});

describe('finalWait: when the copy proceeds without the final snapshot', () => {
  it.each([
    [
      'a source heard from: the fence bound, then the limit and the reaction, from the owner change',
      base(),
      { proceedAt: OC + FB + LOSS, basis: 'bounds', lossBoundMs: LOSS },
    ],
    [
      'a seed whose lease ran out long before (an evacuation): the floor decides',
      base({ leaseLostAt: OC - 10 * 60 * S }),
      { proceedAt: OC + FB, basis: 'bounds-since-lease-loss' },
    ],
    [
      'a seed whose lease ran out 20 s before the owner change: from the lease loss',
      base({ leaseLostAt: OC - 20 * S }),
      { proceedAt: OC - 20 * S + FB + LOSS, basis: 'bounds-since-lease-loss' },
    ],
    [
      'a lease lost after the owner change: from the owner change',
      base({ leaseLostAt: OC + 5 * S }),
      { proceedAt: OC + FB + LOSS, basis: 'bounds' },
    ],
    [
      'a source that reported nothing (an older agent): the fixed 10 minutes from the copy',
      base({ reported: undefined, leaseLostAt: OC - 10 * 60 * S }),
      { proceedAt: OC + 2 * S + 600 * S, basis: 'fixed', lossBoundMs: null },
    ],
    [
      "the deployment's own fixed wait for such a source",
      base({ reported: undefined, fixedWaitMs: 90 * S }),
      { proceedAt: OC + 2 * S + 90 * S, basis: 'fixed' },
    ],
    [
      "an operator's longer wait",
      base({ explicitWaitMs: 30 * 60 * S, leaseLostAt: OC - 60 * S }),
      { proceedAt: OC + 30 * 60 * S, basis: 'explicit', lossBoundMs: LOSS },
    ],
    [
      "an operator's wait shorter than the bounds changes nothing",
      base({ explicitWaitMs: 60 * S }),
      { basis: 'bounds' },
    ],
    [
      'a sidecar with a longer grace raises the fence bound it reports',
      base({ reported: { ...DEFAULTS, unknownGrace: 90 * S } }),
      { proceedAt: OC + (FB + 60 * S) + LOSS, fenceBoundMs: FB + 60 * S },
    ],
    [
      "a sidecar reporting shorter timings never lowers the deployment's fence bound",
      base({
        reported: { ...DEFAULTS, ownerCheckInterval: 500, checkTimeout: 500, unknownGrace: 5 * S, dnsCacheTTL: 0 },
      }),
      { proceedAt: OC + FB + LOSS, fenceBoundMs: FB },
    ],
    [
      "the test stack's timings and the scenario sidecars' settings (1 s deltas, a 2 s limit)",
      base({
        timings: { ownerCheckInterval: 500, unknownGrace: 5 * S, dnsCacheTTL: S, fenceTime: 3 * S },
        reported: {
          ownerCheckInterval: 500,
          checkTimeout: 500,
          unknownGrace: 5 * S,
          dnsCacheTTL: 0,
          deltaSnapshotInterval: S,
          backupLagLimit: 2 * S,
        },
      }),
      { proceedAt: OC + 10 * S + 3 * S, fenceBoundMs: 10 * S, lossBoundMs: 3 * S },
    ],
  ])('%s', (_case, input, expected) => {
    const wait = finalWait(input);
    expect(wait).toMatchObject(expected);
    expect(wait.floorAt).toBe(OC + wait.fenceBoundMs);
    expect(wait.proceedAt).toBeGreaterThanOrEqual(wait.floorAt);
  });

  it('says in its reason what it counted from', () => {
    expect(finalWait(base({ leaseLostAt: OC - 10 * 60 * S })).reason).toMatch(
      /since the source's lease ran out .*no sooner than the fence bound since the owner change/,
    );
    expect(finalWait(base()).reason).toMatch(/since the owner change/);
    expect(finalWait(base({ reported: undefined })).reason).toMatch(/reported no settings/);
  });

  it.each([
    ['a fixed wait shorter than the fence bound', base({ reported: undefined, fixedWaitMs: FB - 1 })],
    ['a negative explicit wait', base({ explicitWaitMs: -1 })],
    ['a lease loss that is not a time', base({ leaseLostAt: Number.NaN })],
  ])('refuses %s', (_case, input) => {
    expect(() => finalWait(input)).toThrow(FenceBoundError);
  });
});

const ms = (max: number) => fc.integer({ min: 0, max });
const settings = fc.record({
  ownerCheckInterval: fc.integer({ min: 1, max: 60 * S }),
  checkTimeout: ms(60 * S),
  unknownGrace: ms(300 * S),
  dnsCacheTTL: ms(120 * S),
  deltaSnapshotInterval: fc.integer({ min: 1, max: 120 * S }),
  backupLagLimit: fc.integer({ min: 1, max: 600 * S }),
});
const deployment: fc.Arbitrary<Partial<OwnershipTimings>> = fc.record(
  {
    ownerCheckInterval: fc.integer({ min: 1, max: 60 * S }),
    unknownGrace: ms(300 * S),
    dnsCacheTTL: ms(120 * S),
    fenceTime: ms(60 * S),
  },
  { requiredKeys: [] },
);
const input = fc.record(
  {
    ownerChangedAt: fc.integer({ min: OC, max: OC + 3_600 * S }),
    copyStartedAt: fc.constant(0),
    timings: deployment,
    reported: settings,
    leaseLostAt: fc.integer({ min: OC - 3_600 * S, max: OC + 7_200 * S }),
    explicitWaitMs: ms(86_400 * S),
  },
  { requiredKeys: ['ownerChangedAt', 'copyStartedAt'] },
);

describe('finalWait: properties', () => {
  it('never proceeds before the fence bound of the deployment (nor of the source) has passed since the owner change', () => {
    fc.assert(
      fc.property(input, (i) => {
        const wait = finalWait({ ...i, copyStartedAt: i.ownerChangedAt });
        expect(wait.proceedAt).toBeGreaterThanOrEqual(i.ownerChangedAt + fenceBound(i.timings));
        expect(wait.proceedAt).toBeGreaterThanOrEqual(wait.floorAt);
        expect(wait.fenceBoundMs).toBe(fenceBound(sourceTimings(i.timings, i.reported)));
      }),
    );
  });

  it("never proceeds before an operator's explicit wait has passed since the owner change", () => {
    fc.assert(
      fc.property(input, (i) => {
        const wait = finalWait({ ...i, copyStartedAt: i.ownerChangedAt });
        if (i.explicitWaitMs !== undefined)
          expect(wait.proceedAt).toBeGreaterThanOrEqual(i.ownerChangedAt + i.explicitWaitMs);
      }),
    );
  });

  it('with a report: the lease loss only ever brings the wait forward, and never below the floor', () => {
    fc.assert(
      fc.property(input, settings, (i, reported) => {
        const { leaseLostAt: _l, explicitWaitMs: _e, ...rest } = i;
        const common = { ...rest, copyStartedAt: i.ownerChangedAt, reported };
        const fromOwner = finalWait(common);
        const withLease = finalWait({ ...common, leaseLostAt: i.leaseLostAt ?? i.ownerChangedAt });
        expect(withLease.proceedAt).toBeLessThanOrEqual(fromOwner.proceedAt);
        expect(withLease.proceedAt).toBeGreaterThanOrEqual(withLease.floorAt);
        expect(fromOwner.proceedAt).toBe(
          i.ownerChangedAt + fromOwner.fenceBoundMs + reported.backupLagLimit + DEFAULT_GUARD_REACTION_MS,
        );
      }),
    );
  });

  it('a slower reported setting never shortens the wait', () => {
    const field = fc.constantFrom<keyof SidecarSettings>(
      'ownerCheckInterval',
      'checkTimeout',
      'unknownGrace',
      'dnsCacheTTL',
      'backupLagLimit',
    );
    fc.assert(
      fc.property(input, settings, field, ms(600 * S), (i, reported, key, more) => {
        const common = { ...i, copyStartedAt: i.ownerChangedAt };
        const before = finalWait({ ...common, reported });
        const after = finalWait({ ...common, reported: { ...reported, [key]: reported[key] + more } });
        expect(after.proceedAt).toBeGreaterThanOrEqual(before.proceedAt);
      }),
    );
  });
});

describe('slowestSettings', () => {
  it("takes each field's largest value among a cluster's members; nothing of none", () => {
    expect(
      slowestSettings([DEFAULTS, { ...DEFAULTS, unknownGrace: 40 * S }, { ...DEFAULTS, backupLagLimit: 70 * S }]),
    ).toEqual({ ...DEFAULTS, unknownGrace: 40 * S, backupLagLimit: 70 * S });
    expect(slowestSettings([])).toBeUndefined();
  });
});
