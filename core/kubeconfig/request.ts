import { z } from 'zod';

/** Gardener's bounds for `expirationSeconds`: at least 10 minutes, at most a day, an hour when not given. */
export const MIN_EXPIRATION_SECONDS = 600;
export const MAX_EXPIRATION_SECONDS = 86_400;
export const DEFAULT_EXPIRATION_SECONDS = 3_600;

export const KUBECONFIG_API_VERSION = 'authentication.gardener.cloud/v1alpha1';

const request = (kind: string) =>
  z
    .object({
      apiVersion: z.literal(KUBECONFIG_API_VERSION).optional(),
      kind: z.literal(kind).optional(),
      spec: z
        .object({
          expirationSeconds: z
            .number()
            .int()
            .min(MIN_EXPIRATION_SECONDS, `at least ${MIN_EXPIRATION_SECONDS} seconds (10 minutes)`)
            .max(MAX_EXPIRATION_SECONDS, `at most ${MAX_EXPIRATION_SECONDS} seconds (a day)`)
            .optional(),
        })
        .strict()
        .optional(),
    })
    .strict();

/** The body of `POST .../adminkubeconfig` (Gardener's AdminKubeconfigRequest); `{}` asks for an hour. */
export const adminKubeconfigRequest = request('AdminKubeconfigRequest');
/** The body of `POST .../viewerkubeconfig` (Gardener's ViewerKubeconfigRequest). */
export const viewerKubeconfigRequest = request('ViewerKubeconfigRequest');
export type KubeconfigRequest = z.infer<typeof adminKubeconfigRequest>;

const response = (kind: string) =>
  z
    .object({
      apiVersion: z.literal(KUBECONFIG_API_VERSION),
      kind: z.literal(kind),
      metadata: z.object({ project: z.string(), name: z.string() }),
      spec: z.object({ expirationSeconds: z.number().int() }),
      status: z.object({
        /** The kubeconfig, base64-encoded YAML, as Gardener returns it. */
        kubeconfig: z.string(),
        expirationTimestamp: z.string().datetime(),
      }),
    })
    .strict();
export const adminKubeconfigResponse = response('AdminKubeconfigRequest');
export const viewerKubeconfigResponse = response('ViewerKubeconfigRequest');
export type KubeconfigResponse = z.infer<typeof adminKubeconfigResponse>;
