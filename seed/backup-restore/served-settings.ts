import { Command } from 'commander';
import type { SidecarSettings } from '../../core/model/seed.js';
import { ownershipTimings } from '../../core/ownership/index.js';
import { backupLagLimit } from '../../core/snapshots/index.js';
import { serveFlagsFrom, serveOptions, type ServeFlags, type ServeOptionValues } from './serve-flags.js';
import { DEFAULT_DELTA_SNAPSHOT_INTERVAL_MS } from './snapshotter.js';

/**
 * What a sidecar started with `flags` runs with: the settings its status reports (`settings()` of the
 * sidecar), derived from its command line for a hosting that cannot ask the sidecar (a Kubernetes seed's
 * agent, which does not reach the pods' status ports), so that the copy's wait is bounded by the source's
 * own settings there too (docs/design.md section 4, "The copy's wait"). The defaults are the sidecar's.
 */
export function servedSettings(flags: ServeFlags): SidecarSettings {
  const timings = ownershipTimings({
    ...(flags.ownerCheckInterval === undefined ? {} : { ownerCheckInterval: flags.ownerCheckInterval }),
    ...(flags.unknownGrace === undefined ? {} : { unknownGrace: flags.unknownGrace }),
    ...(flags.checkTimeout === undefined ? {} : { checkTimeout: flags.checkTimeout }),
  });
  const deltaSnapshotInterval = flags.deltaSnapshotInterval ?? DEFAULT_DELTA_SNAPSHOT_INTERVAL_MS;
  return {
    ownerCheckInterval: timings.ownerCheckInterval,
    checkTimeout: timings.checkTimeout,
    unknownGrace: timings.unknownGrace,
    // The Route 53 API answers the record as it stands; a DNS lookup may act on its own cache for one check
    // interval plus what a caching resolver holds for the record's TTL (the DNS owner lookup's staleness).
    dnsCacheTTL: flags.owner.mode === 'api' ? 0 : timings.dnsCacheTTL,
    deltaSnapshotInterval,
    backupLagLimit: backupLagLimit({ deltaSnapshotInterval, backupLagLimit: flags.backupLagLimit }),
  };
}

/**
 * A sidecar's command line (`backup-restore serve ...`, as `serveArgv` builds it) read back by the CLI's own
 * options; undefined when it is not one or does not parse (an agent reports no settings then, and the copy
 * waits its fixed time).
 */
export function parseServeArgv(argv: readonly string[]): ServeFlags | undefined {
  if (argv[0] !== 'backup-restore' || argv[1] !== 'serve') return undefined;
  const command = serveOptions(new Command('serve'))
    .exitOverride()
    .configureOutput({ writeErr: () => {}, writeOut: () => {} });
  try {
    command.parse(argv.slice(2), { from: 'user' });
    return serveFlagsFrom(command.opts<ServeOptionValues>());
  } catch {
    // Not a command line this version reads: nothing is reported rather than a guess.
    return undefined;
  }
}
