import type { FailureToleranceType } from '../model/index.js';
import { replicasFor } from './layout.js';

/** One etcd member of a control plane: its stable name (as etcd-druid's StatefulSet pods) and its zone. */
export interface EtcdMemberPlacement {
  readonly name: string;
  readonly ordinal: number;
  /** Undefined when the runtime does not know the seed's zones. */
  readonly zone?: string;
}

/** Votes a cluster of `members` voting members needs to commit anything. */
export function quorum(members: number): number {
  return Math.floor(members / 2) + 1;
}

/**
 * The etcd members of a control plane (docs/design.md sections 7 and 9): one without a failure tolerance, three
 * with one. `zones` are the control plane's zones as `chooseZones` picks them: one member per zone for
 * `zone` (so that losing a zone leaves a quorum), every member in the one pinned zone for `node`.
 */
export function etcdMembers(input: {
  tolerance: FailureToleranceType | undefined;
  zones: readonly string[];
}): EtcdMemberPlacement[] {
  const count = replicasFor('etcd', input.tolerance);
  return Array.from({ length: count }, (_, ordinal) => {
    const zone = input.tolerance === 'zone' ? input.zones[ordinal % Math.max(1, input.zones.length)] : input.zones[0];
    return { name: `etcd-main-${ordinal}`, ordinal, ...(zone === undefined ? {} : { zone }) };
  });
}
