import type { z } from 'zod';
import { AdmissionError, ValidationError } from '../errors.js';

/** Parses with a schema and turns the first issue into a ValidationError (or an AdmissionError) that names the field. */
export function parseInput<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path.map(String).join('.') ?? '';
  // Of several unknown keys the first is named: joining them all would read as one nested path.
  const field = issue?.code === 'unrecognized_keys' ? [path, issue.keys[0]].filter(Boolean).join('.') : path;
  const more = result.error.issues.length > 1 ? ` (and ${result.error.issues.length - 1} more)` : '';
  // A well-formed value outside the range its rule allows (core/model/duration.ts): an admission rule, 422.
  if (issue?.code === 'custom' && (issue.params as { outOfRange?: boolean } | undefined)?.outOfRange)
    throw new AdmissionError(`${field || 'body'}: ${issue.message}${more}`, {
      ...(field ? { field } : {}),
      code: 'OutOfRange',
    });
  throw new ValidationError(`${field || 'body'}: ${issue?.message ?? 'invalid'}${more}`, {
    ...(field ? { field } : {}),
    code: issue?.code === 'unrecognized_keys' ? 'UnknownField' : 'Invalid',
  });
}
