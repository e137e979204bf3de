import { ApiError, type Api } from './api.js';
import type { Manifest } from './manifests.js';
import { ManifestError } from './manifests.js';

export type ApplyKind = 'Seed' | 'Shoot';
export type ApplyOutcome = 'created' | 'configured' | 'unchanged';

export interface Applied {
  outcome: ApplyOutcome;
  resource: { kind: ApplyKind; metadata: { name: string; project?: string; resourceVersion: string } } & Record<
    string,
    unknown
  >;
}

type Meta = { name?: string; project?: string; resourceVersion?: string };

/** The kind of a manifest: its own `kind`, else the command's (`seed apply`, `shoot apply`). */
export function kindOf(manifest: Manifest, fallback?: ApplyKind): ApplyKind {
  const kind = manifest.object.kind ?? fallback;
  if (kind === 'Seed' || kind === 'Shoot') return kind;
  throw new ManifestError(
    `${manifest.source}: kind ${kind === undefined ? 'is missing' : `"${String(kind)}" is not Seed or Shoot`}`,
  );
}

/** The resource's API path, from its metadata. */
export function pathOf(kind: ApplyKind, object: Record<string, unknown>, source: string): string {
  const meta = (object.metadata ?? {}) as Meta;
  if (!meta.name) throw new ManifestError(`${source}: metadata.name is missing`);
  if (kind === 'Seed') return `/seeds/${encodeURIComponent(meta.name)}`;
  if (!meta.project) throw new ManifestError(`${source}: a Shoot needs metadata.project`);
  return `/projects/${encodeURIComponent(meta.project)}/shoots/${encodeURIComponent(meta.name)}`;
}

/**
 * The body to PUT for a live object: the manifest, with what the server owns and the manifest leaves out
 * taken from the live object (kubectl apply does not remove fields another manager set). For a Shoot that
 * is its placement: `spec.seedName`, which the scheduler or a migration set.
 */
export function mergeServerOwned(
  kind: ApplyKind,
  desired: Record<string, unknown>,
  live: Record<string, unknown>,
): Record<string, unknown> {
  if (kind !== 'Shoot') return desired;
  const spec = (desired.spec ?? {}) as Record<string, unknown>;
  const liveSeed = ((live.spec ?? {}) as { seedName?: string }).seedName;
  if (spec.seedName !== undefined || liveSeed === undefined) return desired;
  return { ...desired, spec: { ...spec, seedName: liveSeed } };
}

/**
 * `apply`: create the object when it does not exist, else PUT it with the server-owned fields merged in.
 * The API writes nothing when nothing changes and keeps the resourceVersion: that is "unchanged".
 */
export async function applyManifest(api: Api, manifest: Manifest, fallback?: ApplyKind): Promise<Applied> {
  const kind = kindOf(manifest, fallback);
  const path = pathOf(kind, manifest.object, manifest.source);
  const live = await api.request<Record<string, unknown>>('GET', path);
  if (live.status !== 200 && live.status !== 404) throw new ApiError(live.status, live.body);
  const before = live.status === 200 ? ((live.body.metadata ?? {}) as Meta).resourceVersion : undefined;
  const body = live.status === 200 ? mergeServerOwned(kind, manifest.object, live.body) : manifest.object;
  const res = await api.request<Applied['resource']>('PUT', path, { body });
  if (res.status !== 200 && res.status !== 201) throw new ApiError(res.status, res.body);
  const outcome: ApplyOutcome =
    res.status === 201 ? 'created' : res.body.metadata.resourceVersion === before ? 'unchanged' : 'configured';
  return { outcome, resource: res.body };
}
