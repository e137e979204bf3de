import { ConflictError } from '../errors.js';
import type { Evacuation } from './record.js';

/**
 * The latest evacuation of each seed: one item per seed. `put` is conditional on the version the writer
 * read (undefined: no item may exist), so that two controller rounds, or a round and an operator's pause,
 * never overwrite each other; the loser gets ConflictError `EvacuationChanged` carrying the stored record.
 */
export interface EvacuationStore {
  list(): Promise<Evacuation[]>;
  get(seed: string): Promise<Evacuation | undefined>;
  put(record: Evacuation, expectedVersion: number | undefined): Promise<void>;
}

export function evacuationChanged(
  seed: string,
  expectedVersion: number | undefined,
  current: Evacuation | undefined,
  cause?: unknown,
): ConflictError<Evacuation> {
  const expected = expectedVersion === undefined ? 'none stored' : `version ${expectedVersion}`;
  return new ConflictError(
    `the evacuation of seed ${seed} changed concurrently (expected ${expected}, found ${current ? `version ${current.version}` : 'none'}); read it again`,
    { code: 'EvacuationChanged', ...(current ? { current } : {}), ...(cause === undefined ? {} : { cause }) },
  );
}

/** In memory, for tests and the local runtime; the same condition as the DynamoDB adapter. */
export class MemoryEvacuationStore implements EvacuationStore {
  private readonly items = new Map<string, Evacuation>();

  async list(): Promise<Evacuation[]> {
    return [...this.items.values()].sort((a, b) => a.seed.localeCompare(b.seed)).map((e) => structuredClone(e));
  }

  async get(seed: string): Promise<Evacuation | undefined> {
    const item = this.items.get(seed);
    return item ? structuredClone(item) : undefined;
  }

  async put(record: Evacuation, expectedVersion: number | undefined): Promise<void> {
    const current = this.items.get(record.seed);
    if (current?.version !== expectedVersion)
      throw evacuationChanged(record.seed, expectedVersion, current ? structuredClone(current) : undefined);
    this.items.set(record.seed, structuredClone(record));
  }
}
