import { describe, expect, it } from 'vitest';
import { AdmissionError } from '../../../core/errors.js';
import type { ShootSpec } from '../../../core/model/index.js';
import { admitHighAvailability, checkHaDowngrade, checkZoneOnSeed, toAdmissionError } from '../../../core/ha/index.js';
import { aSeed, aShootSpec, ha } from '../scheduling/fixtures.js';

const none: Partial<ShootSpec> = {};
const node = ha('node');
const zone = ha('zone');
const single = aSeed({ name: 'single' });
const multi = aSeed({ name: 'multi', multiZonal: true });

describe('checkZoneOnSeed', () => {
  it.each([
    ['switching none -> zone on a single-zonal seed', none, zone, single, 'ZoneToleranceNeedsMultiZonalSeed'],
    ['switching node -> zone on a single-zonal seed', node, zone, single, 'ZoneToleranceNeedsMultiZonalSeed'],
    ['creating with zone on a single-zonal seed', undefined, zone, single, 'ZoneToleranceNeedsMultiZonalSeed'],
    ['switching node -> zone on a multi-zonal seed', node, zone, multi, undefined],
    ['creating with zone without a seed (the scheduler decides)', undefined, zone, undefined, undefined],
    ['switching none -> node on a single-zonal seed', none, node, single, undefined],
    ['keeping zone on a seed that lost its label', zone, zone, single, undefined],
  ])('%s', (_name, before, after, seed, code) => {
    // Prepare
    const oldSpec = before === undefined ? undefined : aShootSpec({ ...before, seedName: seed?.metadata.name });
    const newSpec = aShootSpec({ ...after, seedName: seed?.metadata.name });

    // Act
    const violation = checkZoneOnSeed({ newSpec, ...(oldSpec ? { oldSpec } : {}), ...(seed ? { seed } : {}) });

    // Assess
    expect(violation?.code).toBe(code);
  });

  it('says what to do instead', () => {
    // Act
    const violation = checkZoneOnSeed({ oldSpec: aShootSpec(node), newSpec: aShootSpec(zone), seed: single });

    // Assess
    expect(violation).toEqual({
      code: 'ZoneToleranceNeedsMultiZonalSeed',
      field: 'spec.controlPlane.highAvailability.failureTolerance.type',
      message: expect.stringMatching(
        /seed single is not .*Use failure tolerance node on this seed, or migrate the shoot to a multi-zonal seed first/,
      ),
    });
  });
});

describe('checkHaDowngrade', () => {
  it.each([
    ['zone -> node', zone, node, true, true],
    ['zone -> none', zone, none, true, true],
    ['node -> none', node, none, true, true],
    ['node -> zone (an upgrade)', node, zone, true, false],
    ['none -> node (an upgrade)', none, node, true, false],
    ['zone -> zone', zone, zone, true, false],
    ['none -> none', none, none, true, false],
    ['zone -> node before the shoot has a seed', zone, node, false, false],
  ])('%s, scheduled %s: refused %s', (_name, before, after, scheduled, refused) => {
    // Act
    const violation = checkHaDowngrade({ oldSpec: aShootSpec(before), newSpec: aShootSpec(after), scheduled });

    // Assess
    expect(violation !== undefined).toBe(refused);
  });

  it('names both tolerances and the way out', () => {
    expect(checkHaDowngrade({ oldSpec: aShootSpec(zone), newSpec: aShootSpec(none), scheduled: true })?.message).toBe(
      'failure tolerance cannot be lowered from zone to none (non-HA) on a running control plane. Keep zone, or create a new shoot with none (non-HA) and move the workload to it.',
    );
  });
});

describe('admitHighAvailability', () => {
  it('reports every violated rule of an update', () => {
    // Prepare: not a real combination for one field, but both rules see the change independently.
    const oldSpec = aShootSpec({ ...zone, seedName: 'single' });
    const newSpec = aShootSpec({ ...node, seedName: 'single' });

    // Act
    const violations = admitHighAvailability({ oldSpec, newSpec, seed: single });

    // Assess
    expect(violations.map((v) => v.code)).toEqual(['HighAvailabilityDowngrade']);
  });

  it('accepts a create with zone that the scheduler will place', () => {
    expect(admitHighAvailability({ newSpec: aShootSpec(zone) })).toEqual([]);
  });

  it('treats a shoot with spec.seedName as scheduled for the downgrade rule', () => {
    expect(
      admitHighAvailability({
        oldSpec: aShootSpec({ ...node, seedName: 'single' }),
        newSpec: aShootSpec({ seedName: 'single' }),
      }),
    ).toHaveLength(1);
  });

  it('turns a violation into a 422 admission error carrying code and field', () => {
    // Act
    const error = toAdmissionError({ code: 'HighAvailabilityDowngrade', field: 'spec.x', message: 'no' });

    // Assess
    expect(error).toBeInstanceOf(AdmissionError);
    expect(error).toMatchObject({
      code: 'HighAvailabilityDowngrade',
      field: 'spec.x',
      message: 'no',
      name: 'AdmissionError',
    });
  });
});
