import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';

/** A file could not be read or is not a manifest. */
export class ManifestError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ManifestError';
  }
}

export interface Manifest {
  /** `file` or `file#2` for the second document of a multi-document file. */
  source: string;
  object: Record<string, unknown>;
}

const EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/** The files `-f` names: a file as it is, a directory's .yaml/.yml/.json files in name order, `-` for stdin. */
function expand(path: string): string[] {
  if (path === '-') return [path];
  let stat;
  try {
    stat = statSync(path);
  } catch (cause) {
    throw new ManifestError(`the path "${path}" does not exist`, { cause });
  }
  if (!stat.isDirectory()) return [path];
  return readdirSync(path)
    .filter((f) => EXTENSIONS.has(extname(f)))
    .sort()
    .map((f) => join(path, f));
}

/**
 * The objects in `paths`: YAML (one or more documents separated by `---`) or JSON (which YAML reads too);
 * a `List` (or `SeedList`, `ShootList`) contributes its items. Empty documents are skipped.
 */
export async function readManifests(
  paths: string[],
  stdin: () => string = () => readFileSync(0, 'utf8'),
): Promise<Manifest[]> {
  const { parseAllDocuments } = await import('yaml');
  const out: Manifest[] = [];
  for (const file of paths.flatMap(expand)) {
    const text = file === '-' ? stdin() : readFileSync(file, 'utf8');
    const name = file === '-' ? '<stdin>' : file;
    const docs = parseAllDocuments(text);
    const list = Array.isArray(docs) ? docs : [docs];
    list.forEach((doc, i) => {
      if (doc.errors.length > 0) throw new ManifestError(`${name}: not YAML or JSON: ${doc.errors[0]!.message}`);
      const value: unknown = doc.toJS();
      const source = list.length > 1 ? `${name}#${i + 1}` : name;
      if (value === null || value === undefined) return;
      if (typeof value !== 'object' || Array.isArray(value))
        throw new ManifestError(`${source}: a manifest is an object with kind, metadata and spec`);
      const object = value as Record<string, unknown>;
      if (typeof object.kind === 'string' && /List$/.test(object.kind) && Array.isArray(object.items)) {
        object.items.forEach((item: unknown, j) =>
          out.push({ source: `${source} items[${j}]`, object: item as Record<string, unknown> }),
        );
      } else {
        out.push({ source, object });
      }
    });
  }
  return out;
}
