import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { SCALE_DOWN_ORDER, type ScalableDependent } from '../../core/dwd/components.js';
import type { ExtensionResource } from '../../core/extensions/index.js';
import { PlaneStoreError } from './errors.js';

/**
 * What the agent decided about one control plane, kept where the plane's processes and data live, so
 * that an agent that restarts (crashed, killed, upgraded) finds its control planes again instead of
 * forgetting them: on a Kubernetes seed the cluster keeps that state, on the `local` runtime nothing
 * but this record does.
 */
export interface PlaneRecord {
  shoot: { technicalID: string; project: string; name: string };
  backupBucket: string;
  hibernated: boolean;
  failureTolerance?: 'node' | 'zone';
  /** The extensions were migrated away: nothing is active here any more. */
  migrated: boolean;
  /** A restore began and did not succeed: the data dir holds no copy to start etcd from. */
  restoring?: boolean;
  /** The shoot's API domain, its kube-apiserver's name. */
  apiDomain?: string;
  /** What the dependency watchdog holds down, with the replicas it remembered. */
  remembered?: Partial<Record<ScalableDependent, number>>;
  extensions: ExtensionResource[];
}

export interface PlaneStore {
  save(record: PlaneRecord): Promise<void>;
  remove(technicalID: string): Promise<void>;
  list(): Promise<PlaneRecord[]>;
}

const planeRecord = z.object({
  shoot: z.object({ technicalID: z.string().min(1), project: z.string().min(1), name: z.string().min(1) }),
  backupBucket: z.string().min(1),
  hibernated: z.boolean(),
  failureTolerance: z.enum(['node', 'zone']).optional(),
  migrated: z.boolean(),
  restoring: z.boolean().optional(),
  apiDomain: z.string().min(1).max(253).optional(),
  remembered: z.partialRecord(z.enum(SCALE_DOWN_ORDER), z.number().int().nonnegative()).optional(),
  // Written by this runtime only: checked for shape, not field by field.
  extensions: z.array(z.record(z.string(), z.unknown())),
});

/** For tests: records that outlive an agent object, as files outlive its process. */
export class MemoryPlaneStore implements PlaneStore {
  private readonly records = new Map<string, string>();

  async save(record: PlaneRecord): Promise<void> {
    this.records.set(record.shoot.technicalID, JSON.stringify(record));
  }

  async remove(technicalID: string): Promise<void> {
    this.records.delete(technicalID);
  }

  async list(): Promise<PlaneRecord[]> {
    return [...this.records.values()].map((json) => JSON.parse(json) as PlaneRecord);
  }
}

/** For fault tests: a store that cannot be read or written, as a seed's API server that refuses the agent. */
export class FailingPlaneStore implements PlaneStore {
  constructor(private readonly reason = 'the plane store does not answer') {}

  async save(): Promise<void> {
    throw new PlaneStoreError(this.reason);
  }

  async remove(): Promise<void> {
    throw new PlaneStoreError(this.reason);
  }

  async list(): Promise<PlaneRecord[]> {
    throw new PlaneStoreError(this.reason);
  }
}

const FILE = 'plane.json';

/**
 * `<workDir>/<technicalID>/plane.json`, next to the plane's etcd data: removing the plane's directory
 * removes its record too. Written to a temporary file and renamed, so a crash leaves the old record or
 * the new one, never half of one; a file that does not parse is skipped and reported.
 */
export class FilePlaneStore implements PlaneStore {
  constructor(private readonly options: { workDir: string; log?: (entry: Record<string, unknown>) => void }) {}

  async save(record: PlaneRecord): Promise<void> {
    const dir = join(this.options.workDir, record.shoot.technicalID);
    mkdirSync(dir, { recursive: true });
    const tmp = join(dir, `${FILE}.tmp`);
    writeFileSync(tmp, JSON.stringify(record, null, 2));
    renameSync(tmp, join(dir, FILE));
  }

  async remove(technicalID: string): Promise<void> {
    rmSync(join(this.options.workDir, technicalID, FILE), { force: true });
  }

  async list(): Promise<PlaneRecord[]> {
    let dirs: string[];
    try {
      dirs = readdirSync(this.options.workDir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const records: PlaneRecord[] = [];
    for (const dir of dirs.sort()) {
      let text: string;
      try {
        text = readFileSync(join(this.options.workDir, dir, FILE), 'utf8');
      } catch {
        // A directory without a record: logs, or a plane from before records were kept. Nothing to adopt.
        continue;
      }
      const parsed = parsePlaneRecord(text, dir);
      if ('record' in parsed) records.push(parsed.record);
      else this.options.log?.({ event: 'plane-record-unreadable', technicalID: dir, error: parsed.error });
    }
    return records;
  }
}

/** A record as kept (JSON) where the plane `technicalID` keeps it: the record, or why it is none. */
export function parsePlaneRecord(text: string, technicalID: string): { record: PlaneRecord } | { error: string } {
  const parsed = planeRecord.safeParse(safeJson(text));
  if (!parsed.success) return { error: parsed.error.message };
  if (parsed.data.shoot.technicalID !== technicalID) return { error: 'names another control plane' };
  return { record: parsed.data as unknown as PlaneRecord };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON: the schema check reports it.
    return undefined;
  }
}
