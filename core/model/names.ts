import { z } from 'zod';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A Kubernetes DNS-1123 label: what seed, project and shoot names must be. */
export const dns1123Label = z
  .string()
  .min(1)
  .max(63)
  .regex(
    DNS1123_LABEL,
    'must be a DNS-1123 label: lower-case letters, digits and "-", starting and ending with a letter or digit',
  );

/** Whether a string is a DNS-1123 label (seed, project and shoot names). */
export function isName(value: string | undefined): value is string {
  return value !== undefined && value.length <= 63 && DNS1123_LABEL.test(value);
}

/** Gardener's technical ID of a shoot: the namespace of its control plane in the seed. */
export function technicalID(project: string, shoot: string): string {
  return `shoot--${project}--${shoot}`;
}

export const MAX_TECHNICAL_ID_LENGTH = 63;

// Kubernetes label keys: optional DNS-subdomain prefix and "/", then a name of at most 63 characters.
const LABEL_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function isLabelKey(key: string): boolean {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)))
    return false;
  return name.length > 0 && name.length <= 63 && LABEL_NAME.test(name);
}

export function isLabelValue(value: string): boolean {
  return value === '' || (value.length <= 63 && LABEL_NAME.test(value));
}

/**
 * The label key and value rules as patterns too, so that the OpenAPI document states them (the functions above
 * decide). The lookahead bounds the prefix to a DNS subdomain's 253 characters, which `maxLength` cannot (it
 * bounds the whole key); without it the document admitted keys the server refuses (schemathesis generated a
 * 262-character prefix). An `allOf` with a second pattern would state the same, but schemathesis generates from
 * that several times more slowly.
 */
export const LABEL_KEY_PATTERN =
  '^(?:(?=[^/]{1,253}/)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$';
export const LABEL_VALUE_PATTERN = '^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$';

export const labelKey = z
  .string()
  .max(317)
  .regex(new RegExp(LABEL_KEY_PATTERN), 'must be a Kubernetes label key ([prefix/]name)')
  .refine(isLabelKey, 'must be a Kubernetes label key ([prefix/]name)');
export const labelValue = z
  .string()
  .max(63)
  .regex(new RegExp(LABEL_VALUE_PATTERN), 'must be a Kubernetes label value')
  .refine(isLabelValue, 'must be a Kubernetes label value');

/** JSON Schema of a record's member names (OpenAPI 3.0 has no keyword for them; schema-driven clients read `propertyNames`). */
export const labelKeyNames = { propertyNames: { type: 'string', maxLength: 317, pattern: LABEL_KEY_PATTERN } } as const;

export const labels = z
  .record(labelKey, labelValue)
  .refine((l) => Object.keys(l).length <= 64, 'at most 64 labels')
  .meta({ ...labelKeyNames, maxProperties: 64 });
