import { z } from 'zod';
import { dns1123Label, labels } from './names.js';

export const conditionStatus = z.enum(['True', 'False', 'Unknown']);

/** A Kubernetes-style condition; `lastTransitionTime` is kept by the server. */
export const condition = z
  .object({
    type: z.string().min(1).max(64).regex(/^[A-Za-z][A-Za-z0-9]*$/, 'must be a CamelCase condition type'),
    status: conditionStatus,
    reason: z.string().max(128).optional(),
    message: z.string().max(1024).optional(),
    lastTransitionTime: z.string().datetime().optional(),
    lastUpdateTime: z.string().datetime().optional(),
  })
  .strict();
export type Condition = z.infer<typeof condition>;

export const taint = z.object({ key: z.string().min(1).max(317), value: z.string().max(63).optional() }).strict();
export type Taint = z.infer<typeof taint>;
export const toleration = taint;
export type Toleration = Taint;

/** Metadata a client may send. Everything else in metadata is owned by the server. */
export const metadataInput = z
  .object({
    name: dns1123Label.optional(),
    labels: labels.optional(),
    annotations: z.record(z.string().max(317), z.string().max(4096)).optional(),
    resourceVersion: z.string().regex(/^[1-9][0-9]{0,15}$/, 'must be a resourceVersion returned by the API').optional(),
  })
  .strict();

export interface ObjectMeta {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  resourceVersion: string;
  uid: string;
  creationTimestamp: string;
  deletionTimestamp?: string;
}

export const providerType = z.string().min(1).max(63).regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a provider type like aws, gcp, azure or local');
export const region = z.string().min(1).max(63).regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a region name like eu-west-1');
export const zone = z.string().min(1).max(63).regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a zone name like eu-west-1a');

/** Gardener's `lastOperation`. */
export const operationType = z.enum(['Create', 'Reconcile', 'Migrate', 'Restore', 'Delete']);
export const operationState = z.enum(['Processing', 'Succeeded', 'Error', 'Failed', 'Pending', 'Aborted']);
export interface LastOperation {
  type: z.infer<typeof operationType>;
  state: z.infer<typeof operationState>;
  progress: number;
  description: string;
  lastUpdateTime: string;
}
