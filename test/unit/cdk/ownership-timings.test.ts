import { App, Duration } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { GardenStack } from '../../../cdk/garden-stack.js';
import { fenceBound, FenceBoundError, parseOwnershipTimings } from '../../../core/ownership/index.js';

const ENV = { account: '123456789012', region: 'eu-west-1' };
const stack = (props: Partial<ConstructorParameters<typeof GardenStack>[2]>) =>
  new GardenStack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Garden', {
    env: ENV,
    internalDomain: 'internal.gardenless.test',
    ...props,
  });

/** The copy's wait for a final snapshot as every migration function is deployed with it. */
function copyWaits(template: Template): Set<string> {
  const functions = Object.values(template.findResources('AWS::Lambda::Function'));
  return new Set(
    functions.flatMap((f) =>
      f.Properties.Environment?.Variables?.COPY_WAIT_FOR_FINAL_MS
        ? [String(f.Properties.Environment.Variables.COPY_WAIT_FOR_FINAL_MS)]
        : [],
    ),
  );
}

describe('ownership timings of a deployment', () => {
  it('refuses a copy wait shorter than the fence bound of the seeds it states', { timeout: 60_000 }, () => {
    // Prepare: seeds that stay serving for 2 minutes on unknown; a copy that would give up after 1.
    const timings = { unknownGrace: 120_000 };

    // Act
    const act = () => stack({ ownershipTimings: timings, copyWaitForFinal: Duration.seconds(60) });

    // Assess
    expect(act).toThrow(FenceBoundError);
    expect(act).toThrow(`waitForFinalTimeout 60000 ms is shorter than the fence bound ${fenceBound(timings)} ms`);
  });

  it("waits the fence bound by default when the seeds' timings make it longer than 10 minutes", () => {
    const timings = { unknownGrace: 15 * 60_000 };

    const template = Template.fromStack(stack({ ownershipTimings: timings }));

    expect(copyWaits(template)).toEqual(new Set([String(fenceBound(timings))]));
  }, 120_000);

  it('waits 10 minutes by default, or what the deployment sets at or above the bound', () => {
    expect(copyWaits(Template.fromStack(stack({})))).toEqual(new Set(['600000']));
    const bound = fenceBound({ ownerCheckInterval: 500, unknownGrace: 5_000 });
    expect(
      copyWaits(
        Template.fromStack(
          stack({
            ownershipTimings: { ownerCheckInterval: 500, unknownGrace: 5_000 },
            copyWaitForFinal: Duration.millis(bound),
          }),
        ),
      ),
    ).toEqual(new Set([String(bound)]));
  }, 120_000);

  it.each([
    ['an unknown field', '{"graceUnknown": 1000}', 'graceUnknown'],
    ['a string', '{"unknownGrace": "30s"}', 'unknownGrace'],
    ['a zero check interval', '{"ownerCheckInterval": 0}', 'ownerCheckInterval'],
    ['not JSON', '30s', ''],
  ])('refuses timings with %s in the stack context', (_case, text, field) => {
    expect(() => parseOwnershipTimings(text)).toThrow(FenceBoundError);
    if (field) expect(() => parseOwnershipTimings(text)).toThrow(field);
  });
});
