import { createHash } from 'node:crypto';
import { createReadStream, linkSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** An OCI content descriptor (image-spec descriptor.md). */
export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

export const MEDIA_TYPES = {
  layer: 'application/vnd.oci.image.layer.v1.tar',
  config: 'application/vnd.oci.image.config.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
} as const;

/** What a Dockerfile's ENV, WORKDIR, USER, ENTRYPOINT and CMD say (image-spec config.md, `config`). */
export interface RunConfig {
  env: Record<string, string>;
  entrypoint?: string[];
  cmd?: string[];
  workingDir?: string;
  user?: string;
}

/** The image configuration of layers with `diffIds` (uncompressed layers: their digests). */
export function imageConfig(options: { diffIds: string[]; run: RunConfig; created?: string }): object {
  const { run } = options;
  return {
    created: options.created ?? '1970-01-01T00:00:00Z',
    architecture: 'amd64',
    os: 'linux',
    config: {
      Env: Object.entries(run.env).map(([k, v]) => `${k}=${v}`),
      ...(run.entrypoint ? { Entrypoint: run.entrypoint } : {}),
      ...(run.cmd ? { Cmd: run.cmd } : {}),
      ...(run.workingDir ? { WorkingDir: run.workingDir } : {}),
      ...(run.user ? { User: run.user } : {}),
    },
    rootfs: { type: 'layers', diff_ids: options.diffIds },
  };
}

export function imageManifest(config: Descriptor, layers: Descriptor[]): object {
  return { schemaVersion: 2, mediaType: MEDIA_TYPES.manifest, config, layers };
}

/**
 * The layout's index: one manifest named `ref`. containerd's importer (`ctr image import`) takes the
 * name from `io.containerd.image.name`; `org.opencontainers.image.ref.name` is the spec's tag.
 */
export function imageIndex(manifest: Descriptor, ref: string): object {
  const tag = ref.slice(ref.lastIndexOf(':') + 1);
  return {
    schemaVersion: 2,
    manifests: [
      {
        ...manifest,
        annotations: { 'io.containerd.image.name': ref, 'org.opencontainers.image.ref.name': tag },
      },
    ],
  };
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return `sha256:${hash.digest('hex')}`;
}

/**
 * Writes an OCI image layout (image-spec image-layout.md) into `dir`: the layer tars (uncompressed, so
 * each digest is also its diff id) linked into `blobs/sha256/` (hard links: a base layer shared by
 * several images is stored once), then the config, the manifest and an index naming `ref`.
 */
export async function writeImageLayout(
  dir: string,
  options: { ref: string; layers: string[]; run: RunConfig },
): Promise<void> {
  const blobs = join(dir, 'blobs', 'sha256');
  mkdirSync(blobs, { recursive: true });
  const layers: Descriptor[] = [];
  for (const tar of options.layers) {
    const digest = await sha256File(tar);
    linkSync(tar, join(blobs, digest.slice('sha256:'.length)));
    layers.push({ mediaType: MEDIA_TYPES.layer, digest, size: statSync(tar).size });
  }
  const blob = (mediaType: string, content: object): Descriptor => {
    const bytes = Buffer.from(JSON.stringify(content));
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    writeFileSync(join(blobs, digest.slice('sha256:'.length)), bytes);
    return { mediaType, digest, size: bytes.length };
  };
  const config = blob(MEDIA_TYPES.config, imageConfig({ diffIds: layers.map((l) => l.digest), run: options.run }));
  const manifest = blob(MEDIA_TYPES.manifest, imageManifest(config, layers));
  writeFileSync(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  // The index last: a layout with an index is complete.
  writeFileSync(join(dir, 'index.json.tmp'), JSON.stringify(imageIndex(manifest, options.ref)));
  renameSync(join(dir, 'index.json.tmp'), join(dir, 'index.json'));
}
