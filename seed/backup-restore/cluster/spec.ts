import { SidecarConfigError } from '../errors.js';

/** One member of a shoot's etcd cluster as every sidecar of it knows it. */
export interface ClusterMemberSpec {
  readonly name: string;
  readonly zone?: string;
  /** Peer URL: raft between the members. */
  readonly peerUrl: string;
  /** Public client URL: what the kube-apiserver and every other client use. */
  readonly clientUrl: string;
  /**
   * Private client URL: where the member serves while fenced. Only the sidecars of this cluster know it,
   * so that a fenced member can still be snapshotted, joined, and reached for the cluster's fence protocol.
   */
  readonly privateUrl: string;
}

export interface ClusterSpec {
  /** This sidecar's member. */
  readonly self: string;
  readonly members: readonly ClusterMemberSpec[];
  /** `--initial-cluster-token`: a new one for every cluster built (created or restored). */
  readonly token: string;
  /**
   * `new`: the members start together and bootstrap the cluster (creation, restore). `existing`: the
   * cluster runs; a member without data joins it as a learner.
   */
  readonly state: 'new' | 'existing';
}

const FIELDS = ['name', 'zone', 'peer', 'client', 'private'] as const;

/** `name=etcd-main-0,zone=eu-west-1a,peer=https://…,client=http://…,private=http://…`, the CLI's `--member`. */
export function formatMemberFlag(member: ClusterMemberSpec): string {
  return [
    `name=${member.name}`,
    ...(member.zone ? [`zone=${member.zone}`] : []),
    `peer=${member.peerUrl}`,
    `client=${member.clientUrl}`,
    `private=${member.privateUrl}`,
  ].join(',');
}

export function parseMemberFlag(text: string): ClusterMemberSpec {
  const fields = new Map<string, string>();
  for (const part of text.split(',')) {
    const at = part.indexOf('=');
    const key = part.slice(0, at);
    if (at <= 0 || !(FIELDS as readonly string[]).includes(key))
      throw new SidecarConfigError(
        `--member "${text}": "${part}" is not one of ${FIELDS.join(', ')}=<value>`,
        'member',
      );
    fields.set(key, part.slice(at + 1));
  }
  const need = (key: string) => {
    const v = fields.get(key);
    if (!v) throw new SidecarConfigError(`--member "${text}" needs ${key}=`, 'member');
    return v;
  };
  const urls = { peerUrl: need('peer'), clientUrl: need('client'), privateUrl: need('private') };
  // Peers may speak TLS (the shoot's etcd peer CA); clients reach etcd as before.
  for (const [field, url] of Object.entries(urls)) {
    const pattern = field === 'peerUrl' ? /^https?:\/\/[^/]+:\d+$/ : /^http:\/\/[^/]+:\d+$/;
    if (!pattern.test(url))
      throw new SidecarConfigError(
        `--member "${text}": ${field} ${url} is not ${field === 'peerUrl' ? 'http(s)' : 'http'}://host:port`,
        'member',
      );
  }
  const zone = fields.get('zone');
  return { name: need('name'), ...(zone ? { zone } : {}), ...urls };
}

/** Rejects a cluster that cannot work: duplicate names or addresses, or a self that is not a member. */
export function validateClusterSpec(spec: ClusterSpec): ClusterMemberSpec {
  const self = spec.members.find((m) => m.name === spec.self);
  if (self === undefined)
    throw new SidecarConfigError(
      `member ${spec.self} is not among ${spec.members.map((m) => m.name).join(', ')}`,
      'member',
    );
  if (new Set(spec.members.map((m) => m.name)).size !== spec.members.length)
    throw new SidecarConfigError('member names must differ', 'member');
  const urls = spec.members.flatMap((m) => [m.peerUrl, m.clientUrl, m.privateUrl]);
  if (new Set(urls).size !== urls.length)
    throw new SidecarConfigError('every member needs its own peer, client and private address', 'member');
  if (spec.token.length === 0) throw new SidecarConfigError('the cluster token must not be empty', 'clusterToken');
  return self;
}

export function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** The addresses of the other members where a sidecar may reach the cluster: public first, then private. */
export function peerEndpoints(spec: ClusterSpec): string[] {
  return spec.members.filter((m) => m.name !== spec.self).flatMap((m) => [m.clientUrl, m.privateUrl]);
}
