import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../core/errors.js';
import { DEFAULT_PROBER_OPTIONS, resolveProberOptions, resolveWeederOptions } from '../../../core/dwd/index.js';

describe('resolveProberOptions', () => {
  it('defaults to docs/design.md section 8', () => {
    expect(resolveProberOptions()).toEqual({
      failureThreshold: 3,
      successThreshold: 2,
      probeIntervalSeconds: 10,
      internalMaxAgeSeconds: 30,
    });
  });

  it('keeps defaults for undefined overrides', () => {
    expect(resolveProberOptions({ failureThreshold: undefined, successThreshold: 4 })).toEqual({
      ...DEFAULT_PROBER_OPTIONS,
      successThreshold: 4,
    });
  });

  it.each([
    { field: 'failureThreshold', value: 0 },
    { field: 'failureThreshold', value: 1.5 },
    { field: 'successThreshold', value: -1 },
    { field: 'probeIntervalSeconds', value: 0 },
    { field: 'internalMaxAgeSeconds', value: Number.POSITIVE_INFINITY },
  ])('rejects $field = $value', ({ field, value }) => {
    const call = () => resolveProberOptions({ [field]: value });
    expect(call).toThrow(ValidationError);
    expect(call).toThrow(expect.objectContaining({ field }));
  });
});

describe('resolveWeederOptions', () => {
  it.each([
    { given: {}, watchDurationSeconds: 300 },
    { given: { watchDurationSeconds: 0 }, watchDurationSeconds: 0 },
  ])('resolves $given', ({ given, watchDurationSeconds }) => {
    expect(resolveWeederOptions(given)).toEqual({ watchDurationSeconds });
  });
});
