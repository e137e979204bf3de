import type { Condition } from '../model/common.js';

/**
 * Merges reported conditions into the current ones the way Kubernetes does: a condition keeps its
 * `lastTransitionTime` while its status stays the same, and gets `now` when the status changes.
 */
export function mergeConditions(
  current: readonly Condition[],
  reported: readonly Condition[],
  now: string,
): Condition[] {
  const byType = new Map(current.map((c) => [c.type, c]));
  const merged = new Map(byType);
  for (const next of reported) {
    const previous = byType.get(next.type);
    const transitioned = !previous || previous.status !== next.status;
    merged.set(next.type, {
      ...next,
      lastTransitionTime: transitioned ? now : (previous.lastTransitionTime ?? now),
      lastUpdateTime: now,
    });
  }
  return [...merged.values()].sort((a, b) => a.type.localeCompare(b.type));
}

export function conditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
}
