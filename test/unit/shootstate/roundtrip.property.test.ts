import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXTENSION_KINDS } from '../../../core/extensions/index.js';
import {
  applyShootState,
  BLOB_THRESHOLD_BYTES,
  InMemoryBlobStore,
  InMemoryShootStateStore,
  isBlobRef,
  loadShootState,
  persistShootState,
  stateBytes,
  type ShootState,
} from '../../../core/shootstate/index.js';

const shoot = { project: 'p', name: 'n', technicalID: 'shoot--p--n' };

/** Small JSON values and, sometimes, ones well above the blob threshold. */
const stateValue = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  {
    weight: 1,
    arbitrary: fc.record({
      blob: fc.integer({ min: BLOB_THRESHOLD_BYTES - 64, max: 2 * BLOB_THRESHOLD_BYTES }).map((n) => 'b'.repeat(n)),
      tag: fc.string(),
    }),
  },
);

const shootStates: fc.Arbitrary<ShootState> = fc
  .uniqueArray(
    fc.record({
      kind: fc.constantFrom(...EXTENSION_KINDS),
      name: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
      purpose: fc.option(fc.constantFrom('normal', 'exposure'), { nil: undefined }),
      state: fc.option(stateValue, { nil: undefined }),
    }),
    { maxLength: 8, selector: (e) => `${e.kind}/${e.name}/${e.purpose ?? ''}` },
  )
  .map((entries) => ({
    apiVersion: 'core.gardenless.io/v1' as const,
    kind: 'ShootState' as const,
    shoot,
    collectedAt: '2025-01-01T00:00:00.000Z',
    collectedAfter: 'migrate' as const,
    extensions: entries.map(({ purpose, state, ...e }) => ({
      ...e,
      ...(purpose === undefined ? {} : { purpose }),
      ...(state === undefined ? {} : { state }),
    })),
  }));

/** JSON equality: what a JSON document can promise (no -0, no undefined members). */
const json = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

describe('ShootState round trip', () => {
  it('persist then load gives back every state, with blobs exactly for the states above the threshold', async () => {
    await fc.assert(
      fc.asyncProperty(shootStates, async (state) => {
        // Prepare
        const store = new InMemoryShootStateStore();
        const blobs = new InMemoryBlobStore();

        // Act
        const { packed } = await persistShootState({ state, store, blobs, inlineBudgetBytes: Number.MAX_SAFE_INTEGER });
        const loaded = await loadShootState({ ...shoot, store, blobs });

        // Assess
        expect(json(loaded?.state)).toEqual(json(state));
        packed.extensions.forEach((e, i) => {
          const original = state.extensions[i]!.state;
          if (original === undefined) expect(e.state).toBeUndefined();
          else expect(isBlobRef(e.state!)).toBe(stateBytes(original).byteLength > BLOB_THRESHOLD_BYTES);
        });
      }),
      { numRuns: 60 },
    );
  });

  it('applying a loaded state gives each resource the collected state', async () => {
    await fc.assert(
      fc.asyncProperty(shootStates, async (state) => {
        // Prepare
        const store = new InMemoryShootStateStore();
        const blobs = new InMemoryBlobStore();
        await persistShootState({ state, store, blobs });

        // Act
        const loaded = await loadShootState({ ...shoot, store, blobs });
        const resources = applyShootState({ state: loaded!.state });

        // Assess
        for (const entry of state.extensions) {
          const r = resources.find(
            (x) => x.kind === entry.kind && x.name === entry.name && x.purpose === entry.purpose,
          );
          expect(json(r?.status.state ?? null)).toEqual(json(entry.state ?? null));
        }
      }),
      { numRuns: 40 },
    );
  });
});
