import { ValidationError } from '../errors.js';

/** What an owner check concludes for one seed (docs/design.md section 4). */
export type OwnerCheckResult = 'owner' | 'not-owner' | 'unknown';

/**
 * What the owner record's single value says (docs/design.md section 4, "Ownership during a live walk").
 *
 * - `seed`: one seed owns the shoot; every member on it may serve (the value is the seed's identity, as
 *   it always was).
 * - `live`: a live migration walks the shoot's etcd cluster from `origin` to `destination` under raft.
 *   Members on either seed may serve, but only members of the etcd cluster `cluster` (etcd's cluster ID):
 *   raft orders writes inside that one cluster, and anything else on either seed (a standby restored
 *   ahead, a leftover of an earlier attempt) is another cluster and stays fenced. Written `origin+destination@cluster`;
 *   a seed identity is a DNS label and a UUID, so neither `+` nor `@` can occur in one.
 */
export type OwnerValue =
  | { readonly kind: 'seed'; readonly seed: string }
  | { readonly kind: 'live'; readonly origin: string; readonly destination: string; readonly cluster: string };

const IDENTITY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const CLUSTER = /^[0-9a-f]{1,20}$/;

export function formatOwnerValue(value: OwnerValue): string {
  if (value.kind === 'seed') return identity(value.seed, 'seed');
  if (value.origin === value.destination)
    throw new ValidationError('a live walk needs two different seeds', { field: 'destination' });
  if (!CLUSTER.test(value.cluster))
    throw new ValidationError(`an etcd cluster ID is lower-case hex, got ${JSON.stringify(value.cluster)}`, {
      field: 'cluster',
    });
  return `${identity(value.origin, 'origin')}+${identity(value.destination, 'destination')}@${value.cluster}`;
}

/** The value's meaning; undefined for text that is neither form (someone wrote the record by hand). */
export function parseOwnerValue(text: string): OwnerValue | undefined {
  const live = /^([^+@]+)\+([^+@]+)@([^+@]+)$/.exec(text);
  if (live) {
    const [, origin = '', destination = '', cluster = ''] = live;
    if (!IDENTITY.test(origin) || !IDENTITY.test(destination) || !CLUSTER.test(cluster)) return undefined;
    return origin === destination ? undefined : { kind: 'live', origin, destination, cluster };
  }
  return IDENTITY.test(text) ? { kind: 'seed', seed: text } : undefined;
}

/**
 * Whether a member on the seed `identity` may serve under `value`. `cluster` is the etcd cluster ID the
 * member's own etcd reports; a member that cannot tell yet (its etcd does not answer) gets `unknown` under
 * a live value, never `owner`.
 */
export function ownerValueAdmits(
  value: OwnerValue | undefined,
  member: { readonly identity: string; readonly cluster?: string },
): OwnerCheckResult {
  if (value === undefined) return 'unknown';
  if (value.kind === 'seed') return value.seed === member.identity ? 'owner' : 'not-owner';
  if (value.origin !== member.identity && value.destination !== member.identity) return 'not-owner';
  if (member.cluster === undefined) return 'unknown';
  return member.cluster === value.cluster ? 'owner' : 'not-owner';
}

/** The seeds a value lets serve. */
export function ownerValueSeeds(value: OwnerValue): readonly string[] {
  return value.kind === 'seed' ? [value.seed] : [value.origin, value.destination];
}

function identity(text: string, field: string): string {
  if (!IDENTITY.test(text))
    throw new ValidationError(`${field} ${JSON.stringify(text)} is not a seed identity`, { field });
  return text;
}
