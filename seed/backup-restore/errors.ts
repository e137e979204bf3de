/**
 * Errors of the backup-restore sidecar. Each is a small named class that keeps its `cause`, so the seed
 * agent can tell "etcd would not start" from "the store is down" from "the backups do not add up".
 */

class SidecarError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
  }
}

/** etcd did not become healthy in time, or exited while starting. */
export class EtcdStartError extends SidecarError {
  constructor(
    message: string,
    readonly endpoint: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** An `etcdctl` (or `etcd`) command failed; `stderr` says why. */
export class EtcdctlError extends SidecarError {
  constructor(
    message: string,
    readonly command: { args: readonly string[]; exitCode: number | null; stderr: string },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A delta snapshot object that is not in the format this sidecar writes. */
export class DeltaFormatError extends SidecarError {
  constructor(
    message: string,
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A restore did not reach the revision its snapshots promise: an event of a delta did not land on the
 * revision it carries, or etcd ended elsewhere. Serving from such a data dir would silently lose writes.
 */
export class RestoreRevisionError extends SidecarError {
  constructor(
    message: string,
    readonly revisions: { expected: number; actual: number },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A snapshot could not be taken or uploaded. The snapshotter keeps its events and tries again. */
export class SnapshotTakeError extends SidecarError {
  constructor(
    message: string,
    readonly kind: 'Full' | 'Incr',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A sidecar option that makes no sense (an interval of zero, a port used twice, a missing store). */
export class SidecarConfigError extends SidecarError {
  constructor(
    message: string,
    readonly field: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** An operation that needs etcd running (a snapshot, a replay) found it stopped. */
export class EtcdNotRunningError extends SidecarError {}

/** A call to etcd's JSON gateway got no answer, or an error answer. */
export class EtcdGatewayError extends SidecarError {
  constructor(
    message: string,
    readonly request: { endpoint: string; path: string; status: number | undefined },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A cluster operation (join, fence, restore) cannot complete now; the sidecar tries again later. */
export class ClusterMemberError extends SidecarError {
  constructor(
    message: string,
    readonly member: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The other seed's members of a walking cluster stopped answering while the walk needs them. */
export class WalkPeerLostError extends ClusterMemberError {}

/** etcd no longer holds the events asked for (compacted, or the watch was cancelled): only a full snapshot helps. */
export class HistoryUnavailableError extends SidecarError {}

/** A catch-up of a restore ahead asked of a sidecar that holds none (it serves, or it never restored ahead). */
export class CatchUpRefusedError extends SidecarError {}

/**
 * A restored etcd's key space differs from what the source's snapshot names at the same revision
 * (docs/design.md section 4, "Fidelity"): a delta lost or changed an event that the revisions alone do
 * not show. Serving it would hand clients a history the source never had.
 */
export class RestoreDigestError extends SidecarError {
  constructor(
    message: string,
    readonly digests: { revision: number; expected: string; actual: string; snapshot: string },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
