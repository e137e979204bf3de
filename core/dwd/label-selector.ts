import { z } from 'zod';

/** Kubernetes `metav1.LabelSelector`, the way dependency-watchdog's weeder config selects dependants. */
export const labelSelectorRequirement = z
  .object({
    key: z.string().min(1),
    operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
    values: z.array(z.string()).optional(),
  })
  .strict();
export type LabelSelectorRequirement = z.infer<typeof labelSelectorRequirement>;

export const labelSelector = z
  .object({
    matchLabels: z.record(z.string(), z.string()).optional(),
    matchExpressions: z.array(labelSelectorRequirement).optional(),
  })
  .strict();
export type LabelSelector = z.infer<typeof labelSelector>;

/**
 * Kubernetes semantics: all terms must hold, an empty selector selects everything, and `NotIn`
 * selects objects that lack the key.
 */
export function matchesSelector(labels: Readonly<Record<string, string>>, selector: LabelSelector): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  return (selector.matchExpressions ?? []).every((requirement) => matchesRequirement(labels, requirement));
}

function matchesRequirement(labels: Readonly<Record<string, string>>, requirement: LabelSelectorRequirement): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, requirement.key);
  const value = labels[requirement.key];
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return has && value !== undefined && values.includes(value);
    case 'NotIn':
      return !has || value === undefined || !values.includes(value);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
  }
}
