import { loadYaml } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { SeedAgentConfigError } from '../agent/errors.js';

/**
 * Which image each control-plane container runs, as Gardener's image vector (`charts/images.yaml`):
 * a list of `{name, repository, tag}`. The agent's `--image-vector FILE` (YAML or JSON) overrides the
 * defaults entry by entry, so an operator pins or mirrors images without rebuilding the agent.
 */
export const IMAGE_NAMES = [
  // The backup-restore sidecar, which supervises etcd in the same container (fence-first needs it to own etcd's process).
  'etcd-backup-restore',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'gardener-resource-manager',
  'machine-controller-manager',
  'cluster-autoscaler',
] as const;
export type ImageName = (typeof IMAGE_NAMES)[number];

const entry = z
  .object({
    name: z.enum(IMAGE_NAMES),
    repository: z
      .string()
      .min(1)
      .max(255)
      .regex(/^[a-z0-9]([a-z0-9._/:-]*[a-z0-9])?$/, 'an image repository'),
    tag: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$|^sha256:[a-f0-9]{64}$/, 'a tag or sha256 digest'),
  })
  .strict();
export const imageVectorSchema = z.object({ images: z.array(entry).max(64) }).strict();
export type ImageVectorFile = z.infer<typeof imageVectorSchema>;
export type ImageVector = Record<ImageName, string>;

/** The defaults: the Kubernetes line the test seed runs (v1.30), Gardener's published components, and this project's image. */
export const DEFAULT_IMAGES: ImageVectorFile = {
  images: [
    { name: 'etcd-backup-restore', repository: 'ghcr.io/gardenless/gardenless', tag: '0.1.0' },
    { name: 'kube-apiserver', repository: 'registry.k8s.io/kube-apiserver', tag: 'v1.30.14' },
    { name: 'kube-controller-manager', repository: 'registry.k8s.io/kube-controller-manager', tag: 'v1.30.14' },
    { name: 'kube-scheduler', repository: 'registry.k8s.io/kube-scheduler', tag: 'v1.30.14' },
    {
      name: 'gardener-resource-manager',
      repository: 'europe-docker.pkg.dev/gardener-project/releases/gardener/resource-manager',
      tag: 'v1.110.0',
    },
    {
      name: 'machine-controller-manager',
      repository: 'europe-docker.pkg.dev/gardener-project/releases/gardener/machine-controller-manager',
      tag: 'v0.56.0',
    },
    { name: 'cluster-autoscaler', repository: 'registry.k8s.io/autoscaling/cluster-autoscaler', tag: 'v1.30.4' },
  ],
};

/** The image references, the defaults overridden by `file`'s entries. */
export function imageVector(file?: ImageVectorFile): ImageVector {
  const refs = Object.fromEntries(DEFAULT_IMAGES.images.map((i) => [i.name, reference(i)])) as ImageVector;
  for (const i of file?.images ?? []) refs[i.name] = reference(i);
  return refs;
}

/** Reads and validates an image vector file (YAML or JSON). */
export function readImageVector(path: string): ImageVector {
  let parsed: unknown;
  try {
    parsed = loadYaml(readFileSync(path, 'utf8'));
  } catch (cause) {
    throw new SeedAgentConfigError(
      `the image vector ${path} is not readable YAML: ${cause instanceof Error ? cause.message : String(cause)}`,
      'imageVector',
      { cause },
    );
  }
  const result = imageVectorSchema.safeParse(parsed);
  if (!result.success) {
    throw new SeedAgentConfigError(
      `the image vector ${path} is invalid: ${result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
      'imageVector',
      { cause: result.error },
    );
  }
  return imageVector(result.data);
}

function reference(i: { repository: string; tag: string }): string {
  return i.tag.startsWith('sha256:') ? `${i.repository}@${i.tag}` : `${i.repository}:${i.tag}`;
}
