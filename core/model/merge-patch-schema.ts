import { z } from 'zod';

/**
 * The JSON merge patch (RFC 7386) schema of a resource schema: every member optional, and nullable (null
 * removes it) where the resource lets it be absent, objects patched member by member and as strict as the resource (an unknown field is a 400
 * in the patch too), record values nullable, everything else (strings, arrays, enums) replaced whole and
 * validated as in the resource. Rules that span members (refinements) apply to the merged resource,
 * which is validated again after the merge.
 */
export function mergePatchSchema(schema: z.ZodType): z.ZodType {
  const inner =
    schema instanceof z.ZodOptional || schema instanceof z.ZodNullable ? (schema.unwrap() as z.ZodType) : schema;
  if (inner instanceof z.ZodObject) {
    const shape = Object.fromEntries(
      Object.entries(inner.shape as Record<string, z.ZodType>).map(([k, v]) => {
        const patched = mergePatchSchema(v);
        return [k, (v.safeParse(undefined).success ? patched.nullable() : patched).optional()];
      }),
    );
    return z.strictObject(shape);
  }
  if (inner instanceof z.ZodRecord) {
    const patched = z.record(inner.keyType as z.ZodString, mergePatchSchema(inner.valueType as z.ZodType).nullable());
    const meta = inner.meta();
    return meta ? patched.meta(meta) : patched;
  }
  return inner;
}
