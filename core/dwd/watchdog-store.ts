import { ConflictError } from '../errors.js';
import type { ScaleCommand, RestartCommand } from './commands.js';
import type { WeederDependency } from './components.js';
import type { WatchdogEvent } from './events.js';
import { initialProbeState, type ProbeState } from './probe-state.js';
import { initialWeederState, type WeederState } from './weeder-state.js';

export type WatchdogCommand = ScaleCommand | RestartCommand;

/** Everything the watchdog keeps per shoot between rounds. */
export interface WatchdogRecord {
  probe: ProbeState;
  weeder: Record<WeederDependency, WeederState>;
  /**
   * Commands decided and stored but not yet confirmed sent: a round that crashed between storing its
   * decision and sending it re-sends them next round (scale and restart commands are idempotent by id).
   */
  pending: { commandId: string; seedName: string; actions: WatchdogCommand[]; events: WatchdogEvent[] }[];
}

export interface StoredWatchdogRecord {
  record: WatchdogRecord;
  /** Optimistic concurrency: a save names the version it read. */
  version: number;
}

/** Per-shoot watchdog state; `save` fails with ConflictError when another round wrote first. */
export interface WatchdogStateStore {
  load(shootKey: string): Promise<StoredWatchdogRecord | undefined>;
  /** Many at once (a round reads every shoot's state; a store reads them in batches): absent keys have none. */
  loadMany?(shootKeys: readonly string[]): Promise<Map<string, StoredWatchdogRecord>>;
  save(shootKey: string, record: WatchdogRecord, expectedVersion: number | undefined): Promise<number>;
}

export function initialWatchdogRecord(): WatchdogRecord {
  return {
    probe: initialProbeState(),
    weeder: { etcd: initialWeederState(), 'kube-apiserver': initialWeederState() },
    pending: [],
  };
}

/** In memory, for tests and the local runtime. */
export class MemoryWatchdogStateStore implements WatchdogStateStore {
  private readonly items = new Map<string, StoredWatchdogRecord>();
  async load(shootKey: string): Promise<StoredWatchdogRecord | undefined> {
    const item = this.items.get(shootKey);
    return item ? structuredClone(item) : undefined;
  }
  async loadMany(shootKeys: readonly string[]): Promise<Map<string, StoredWatchdogRecord>> {
    const out = new Map<string, StoredWatchdogRecord>();
    for (const key of shootKeys) {
      const item = this.items.get(key);
      if (item) out.set(key, structuredClone(item));
    }
    return out;
  }
  async save(shootKey: string, record: WatchdogRecord, expectedVersion: number | undefined): Promise<number> {
    const current = this.items.get(shootKey);
    if (current?.version !== expectedVersion) {
      throw new ConflictError(`watchdog state of ${shootKey} changed since version ${String(expectedVersion)}`);
    }
    const version = (current?.version ?? 0) + 1;
    this.items.set(shootKey, { record: structuredClone(record), version });
    return version;
  }
}
