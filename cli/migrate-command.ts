import { Option, type Command } from 'commander';
import type { ListrTask } from 'listr2';
import type { GardenClient } from '../adapters/http/garden-client.js';
import { ApiError, apiErrorLine, type Api } from './api.js';
import type { OutputFormat } from './config.js';
import { requireConfirmation } from './confirm.js';
import { serialize } from './output.js';
import { migrationPreviewText, type MigrationPreview } from './render.js';
import { migrateAccepted, migrationTable, migrationView, type MigrationResponse } from './migration-view.js';
import { splitShoot } from './refs.js';

/** The watch could not follow the migration (the API kept failing, or refused the read). */
export class MigrationWatchError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MigrationWatchError';
  }
}

type Output = 'table' | 'json';

interface MigrateAnswer {
  migrationId: string;
  resumed: boolean;
  destinationSeed: string;
}

function structured(format: OutputFormat): format is 'json' | 'yaml' {
  return format === 'json' || format === 'yaml';
}

/**
 * `gardenless shoot migrate <project>/<name> [--to SEED] [--mode auto|good|bad] [--final-snapshot-wait D] [--accept-etcd-digest-mismatch] [--dry-run] [--yes] [--watch]` and
 * `gardenless shoot migration <project>/<name> [--watch]`, added to the `shoot` command.
 */
export function registerMigrateCommands(shoot: Command, connect: () => Promise<Api>, output: () => OutputFormat): void {
  shoot
    .command('migrate <ref>')
    .description("move a shoot's control plane to another seed (<project>/<name>); calling it after an Error resumes")
    .option('--to <seed>', 'destination seed (default: chosen by the scheduler)')
    .addOption(
      new Option(
        '--mode <mode>',
        'auto (good path if the source seed heartbeats, else bad), good, bad, or live (etcd walks to the destination under raft; a single-member, running shoot)',
      ).choices(['auto', 'good', 'bad', 'live']),
    )
    .option(
      '--accept-etcd-digest-mismatch',
      "resume a migration that failed at restore-etcd on the fidelity check and serve the destination's etcd although its key space differs from the source's digest (the record keeps the override)",
    )
    .option(
      '--final-snapshot-wait <duration>',
      "wait at least this long after the owner change for the source's final snapshot (e.g. 30m): no loss for a source cut off that long, at the price of the shoot's recovery (default: the source's bounds decide)",
    )
    .option('--dry-run', 'show the destination, the path, the steps and the fence bound; start nothing')
    .option('-y, --yes', 'do not ask before a bad-path migration (--mode bad) or an override')
    .option('-w, --watch', 'show the steps live until the migration ends (exit code 1 on Error)')
    .action(
      async (
        ref: string,
        flags: {
          to?: string;
          mode?: 'auto' | 'good' | 'bad' | 'live';
          acceptEtcdDigestMismatch?: boolean;
          finalSnapshotWait?: string;
          watch?: boolean;
          dryRun?: boolean;
          yes?: boolean;
        },
      ) => {
        const [project, name] = splitShoot(ref);
        const api = await connect();
        const path = `/projects/${project}/shoots/${name}/migrate`;
        const body = {
          ...(flags.to ? { destinationSeed: flags.to } : {}),
          ...(flags.mode ? { mode: flags.mode } : {}),
          ...(flags.acceptEtcdDigestMismatch ? { acceptEtcdDigestMismatch: true } : {}),
          ...(flags.finalSnapshotWait ? { finalSnapshotWait: flags.finalSnapshotWait } : {}),
        };
        const format = output();
        if (flags.dryRun) {
          const preview = await api.expect<MigrationPreview>('POST', path, { body, query: { dryRun: 'All' } });
          console.log(
            structured(format) ? await serialize(preview, format) : migrationPreviewText(`${project}/${name}`, preview),
          );
          return;
        }
        if (flags.mode === 'bad') {
          await requireConfirmation(
            'the bad-path migration',
            `Migrate ${project}/${name} on the bad path? The source seed is not asked: its etcd fences itself when the owner record moves, and writes after its last snapshot are lost.`,
            { yes: flags.yes ?? false },
          );
        }
        if (flags.acceptEtcdDigestMismatch) {
          await requireConfirmation(
            'the override of the fidelity check',
            `Resume the migration of ${project}/${name} and serve its etcd although the restored key space differs from the source's? Clients may see a history the source never had.`,
            { yes: flags.yes ?? false },
          );
        }
        const res = await api.request<MigrateAnswer>('POST', path, { body });
        if (res.status !== 202) throw new ApiError(res.status, res.body);
        const plain: Output = structured(format) ? 'json' : 'table';
        if (!flags.watch) {
          console.log(
            structured(format) ? await serialize(res.body, format) : migrateAccepted(res.body, `${project}/${name}`),
          );
          return;
        }
        if (plain === 'table') console.log(migrateAccepted(res.body, `${project}/${name}`));
        await watchMigration({ client: api.raw, project, name, migrationId: res.body.migrationId, output: plain });
      },
    );

  shoot
    .command('migration <ref>')
    .description("show a shoot's current or last migration with every step (<project>/<name>)")
    .option('-w, --watch', 'show the steps live until the migration ends (exit code 1 on Error)')
    .action(async (ref: string, flags: { watch?: boolean }) => {
      const [project, name] = splitShoot(ref);
      const api = await connect();
      const format = output();
      if (flags.watch) {
        await watchMigration({ client: api.raw, project, name, output: structured(format) ? 'json' : 'table' });
        return;
      }
      const record = await api.expect<MigrationResponse>('GET', `/projects/${project}/shoots/${name}/migration`);
      console.log(structured(format) ? await serialize(record, format) : migrationTable(record, { now: new Date() }));
    });
}

export interface PollOptions {
  client: GardenClient;
  project: string;
  name: string;
  /** Only this migration's record counts (right after a migrate call the previous one may still be read). */
  migrationId?: string;
  onRecord: (record: MigrationResponse) => void;
  intervalMs?: number;
  /** Failed reads in a row (network, 5xx, throttling) before the watch gives up. Default 10. */
  maxConsecutiveErrors?: number;
}

/** Reads the migration every interval until it is Succeeded or Error; returns the final record. */
export async function pollMigration(options: PollOptions): Promise<MigrationResponse> {
  const path = `/projects/${options.project}/shoots/${options.name}/migration`;
  const max = options.maxConsecutiveErrors ?? 10;
  let errors = 0;
  for (;;) {
    let failure: unknown;
    try {
      const res = await options.client.request<MigrationResponse>('GET', path);
      // Transient: the API or the network; and a 404 just after a migrate call, before the record is readable.
      const transient =
        res.status >= 500 || res.status === 429 || (res.status === 404 && options.migrationId !== undefined);
      if (res.status === 200) {
        errors = 0;
        if (options.migrationId === undefined || res.body.id === options.migrationId) {
          options.onRecord(res.body);
          if (res.body.state !== 'Running') return res.body;
        }
      } else if (!transient) {
        throw new MigrationWatchError(apiErrorLine(res.status, res.body));
      } else {
        failure = new Error(apiErrorLine(res.status, res.body));
      }
    } catch (error) {
      if (error instanceof MigrationWatchError) throw error;
      failure = error;
    }
    if (failure !== undefined && ++errors > max) {
      throw new MigrationWatchError(`reading ${path} failed ${errors} times in a row`, { cause: failure });
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 1000));
  }
}

/** The latest record, with a version, for the list's tasks to wait on. */
class RecordFeed {
  record: MigrationResponse | undefined;
  version = 0;
  private error: unknown;
  private waiters: (() => void)[] = [];

  push(record: MigrationResponse): void {
    this.record = record;
    this.version++;
    this.wake();
  }
  fail(error: unknown): void {
    this.error = error ?? new Error('the watch failed');
    this.wake();
  }
  /** Resolves with the record once its version is newer than `seen`. */
  async after(seen: number): Promise<{ record: MigrationResponse; version: number }> {
    while (this.version <= seen || this.record === undefined) {
      if (this.error !== undefined) throw this.error;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    return { record: this.record, version: this.version };
  }
  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

/** One listr task per step: it follows the step's state in the feed until the step is settled. */
function stepTask(id: string, feed: RecordFeed): ListrTask {
  const first = migrationView(feed.record!, { now: new Date() }).steps.find((s) => s.id === id)!;
  return {
    title: first.title,
    rendererOptions: { persistentOutput: true },
    task: async (_ctx, task) => {
      let detail: string | undefined;
      for (let seen = 0; ;) {
        const next = await feed.after(seen);
        seen = next.version;
        const view = migrationView(next.record, { now: new Date() });
        const step = view.steps.find((s) => s.id === id)!;
        // The running step's duration changes every poll; titles change only when the step settles, so that
        // the simple renderer (CI logs) prints each change once.
        if (step.state !== 'running' && step.state !== 'pending' && task.title !== step.line) task.title = step.line;
        if (step.detail && step.detail !== detail) task.output = detail = step.detail;
        if (step.state === 'succeeded') return;
        if (step.state === 'skipped') return task.skip(step.detail ?? 'skipped');
        if (step.state === 'failed') throw new Error(step.detail ?? 'failed');
        if (view.done) return task.skip('not reached');
      }
    },
  };
}

/**
 * Follows a migration to its end: live with listr2 (the simple renderer when stdout is not a
 * terminal, so CI logs stay readable), or silently with `--output json`, printing the final record.
 * Sets the exit code: 0 Succeeded, 1 Error.
 */
export async function watchMigration(options: {
  client: GardenClient;
  project: string;
  name: string;
  migrationId?: string;
  output: Output;
  intervalMs?: number;
}): Promise<MigrationResponse> {
  const feed = new RecordFeed();
  const polling = pollMigration({ ...options, onRecord: (r) => feed.push(r) });
  polling.catch((error: unknown) => feed.fail(error));
  let final: MigrationResponse;
  if (options.output === 'json') {
    final = await polling;
    console.log(JSON.stringify(final, null, 2));
  } else {
    const { record } = await feed.after(0);
    console.log(migrationView(record, { now: new Date() }).heading);
    const { Listr } = await import('listr2');
    const list = new Listr(
      record.steps.map((s) => stepTask(s.id, feed)),
      {
        concurrent: false,
        exitOnError: false,
        renderer: process.stdout.isTTY ? 'default' : 'simple',
        rendererOptions: { collapseSkips: false, collapseErrors: false, showSkipMessage: true, showErrorMessage: true },
      },
    );
    await list.run();
    final = await polling;
    const view = migrationView(final, { now: new Date() });
    // The path is decided (or switched) while the list runs: repeat the heading when it changed.
    if (view.heading !== migrationView(record, { now: new Date() }).heading) console.log(view.heading);
    console.log(view.status);
  }
  process.exitCode = final.state === 'Succeeded' ? 0 : 1;
  return final;
}
