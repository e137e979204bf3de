import type { OutputFormat } from './config.js';

/** A resource as `-o name` prints it: `seed/<name>`, `shoot/<project>/<name>` (accepted back by every command). */
export function resourceName(object: { kind?: string; metadata?: { name?: string; project?: string } }): string {
  const kind = (object.kind ?? 'object').toLowerCase();
  const { project, name } = object.metadata ?? {};
  return project ? `${kind}/${project}/${name}` : `${kind}/${name}`;
}

/** JSON as kubectl prints it (two spaces), YAML as a block document (the YAML library loads only for it). */
export async function serialize(value: unknown, format: 'json' | 'yaml'): Promise<string> {
  if (format === 'json') return JSON.stringify(value, null, 2);
  const { stringify } = await import('yaml');
  return stringify(value, { lineWidth: 0 }).trimEnd();
}

/** Several objects in one document, as kubectl prints a list: `apiVersion: v1, kind: List`. */
export function asList(items: unknown[]): {
  apiVersion: 'v1';
  kind: 'List';
  items: unknown[];
  metadata: { resourceVersion: string };
} {
  return { apiVersion: 'v1', kind: 'List', items, metadata: { resourceVersion: '' } };
}

/**
 * What a read command prints: the table (or its wide form), the objects (one object as itself, several as
 * a List), or their names.
 */
export async function formatResources<T extends { kind?: string; metadata?: { name?: string; project?: string } }>(
  items: T[],
  options: { format: OutputFormat; single: boolean; table: (items: T[], wide: boolean) => string },
): Promise<string> {
  switch (options.format) {
    case 'json':
    case 'yaml':
      return serialize(options.single ? items[0] : asList(items), options.format);
    case 'name':
      return items.map(resourceName).join('\n');
    default:
      return options.table(items, options.format === 'wide');
  }
}
