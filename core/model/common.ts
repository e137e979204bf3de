import { z } from 'zod';
import { dns1123Label, labelKey, labelKeyNames, labels } from './names.js';

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/** Whether a string is an RFC 3339 date-time (JSON Schema's `date-time`): any offset, either case of T and Z. */
export function isDateTime(text: string): boolean {
  const m = RFC3339.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const offsetOk = m[8] === undefined || (Number(m[8]) < 24 && Number(m[9]) < 60);
  return (
    month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour < 24 && minute < 60 && second <= 60 && offsetOk
  );
}

/** An RFC 3339 date-time, with the same rule in the validator and in the OpenAPI document (`format: date-time`). */
export const dateTime = z
  .string()
  .max(40)
  .refine(isDateTime, 'must be an RFC 3339 date-time like 2025-01-31T12:00:00Z or 2025-01-31T13:00:00+01:00')
  .meta({ format: 'date-time' });

export const conditionStatus = z.enum(['True', 'False', 'Unknown']);

/** A Kubernetes-style condition; `lastTransitionTime` is kept by the server. */
export const condition = z
  .object({
    type: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z][A-Za-z0-9]*$/, 'must be a CamelCase condition type'),
    status: conditionStatus,
    reason: z.string().max(128).optional(),
    message: z.string().max(1024).optional(),
    lastTransitionTime: dateTime.optional(),
    lastUpdateTime: dateTime.optional(),
  })
  .strict();
export type Condition = z.infer<typeof condition>;

export const taint = z.object({ key: z.string().min(1).max(317), value: z.string().max(63).optional() }).strict();
export type Taint = z.infer<typeof taint>;
export const toleration = taint;
export type Toleration = Taint;

/** Annotations: qualified names as keys (as labels), values of any text up to 4 KiB. */
export const annotations = z
  .record(labelKey, z.string().max(4096))
  .refine((a) => Object.keys(a).length <= 64, 'at most 64 annotations')
  .meta({ ...labelKeyNames, maxProperties: 64 });

/**
 * Metadata a client may send. Labels and annotations are the client's; `resourceVersion` makes an update
 * conditional; `uid`, when sent, must be the stored object's (Kubernetes' UID precondition, 409). The
 * other fields the server owns are accepted and ignored, so that an object can be PUT back as it was read.
 */
export const metadataInput = z
  .object({
    name: dns1123Label.optional(),
    labels: labels.optional(),
    annotations: annotations.optional(),
    resourceVersion: z
      .string()
      .regex(/^[1-9][0-9]{0,14}$/, 'must be a resourceVersion returned by the API')
      .optional(),
    uid: z.string().min(1).max(64).optional().describe("When sent, must be the stored object's uid (409 otherwise)."),
    creationTimestamp: dateTime.optional().describe('Owned by the server; ignored.'),
    deletionTimestamp: dateTime.optional().describe('Owned by the server; ignored.'),
    generation: z
      .number()
      .int()
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .describe('Owned by the server; ignored.'),
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

export const providerType = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a provider type like aws, gcp, azure or local');
export const region = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a region name like eu-west-1');
export const zone = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a zone name like eu-west-1a');

/** Gardener's `lastOperation`. */
export const operationType = z.enum(['Create', 'Reconcile', 'Hibernate', 'Wake', 'Migrate', 'Restore', 'Delete']);
export const operationState = z.enum(['Processing', 'Succeeded', 'Error', 'Failed', 'Pending', 'Aborted']);
export interface LastOperation {
  type: z.infer<typeof operationType>;
  state: z.infer<typeof operationState>;
  progress: number;
  description: string;
  lastUpdateTime: string;
}
