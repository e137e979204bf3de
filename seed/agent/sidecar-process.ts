import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CatchUpResult } from '../backup-restore/catch-up.js';
import type { SidecarStatus } from '../backup-restore/sidecar.js';
import { CatchUpError, LocalProcessError, RestoreRefusedError } from './errors.js';
import { ProcessGroup } from './process-group.js';

export interface SidecarLaunch {
  technicalID: string;
  /** The program and leading arguments of the gardenless CLI (default: the repository's bin/gardenless). */
  command: readonly string[];
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  /** The sidecar's stderr (one JSON line per event) is appended here. */
  logFile: string;
  /** Default 60 s: a restore downloads and replays before the sidecar reports. */
  startTimeoutMs?: number;
}

/**
 * One `gardenless backup-restore serve` child in its own process group: the sidecar and the etcd it
 * supervises. It reports its addresses on stdout once it serves its status endpoint (after a restore).
 */
export class SidecarProcess {
  private constructor(
    private readonly group: ProcessGroup,
    readonly statusUrl: string,
    readonly clientUrl: string,
  ) {}

  static async start(launch: SidecarLaunch): Promise<SidecarProcess> {
    mkdirSync(dirname(launch.logFile), { recursive: true });
    const log = createWriteStream(launch.logFile, { flags: 'a' });
    const [program, ...lead] = launch.command;
    if (program === undefined) throw new LocalProcessError('no sidecar command', launch.technicalID);
    const group = ProcessGroup.start(program, [...lead, ...launch.args], {
      env: launch.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    group.child.stderr?.pipe(log);
    let tail = '';
    group.child.stderr?.on('data', (chunk: Buffer) => (tail = (tail + chunk.toString()).slice(-2000)));
    const lines = createInterface({ input: group.child.stdout! });
    let refusal: { name: string; error: string; details?: Record<string, unknown> } | undefined;
    const linesClosed = new Promise<void>((resolve) => lines.once('close', resolve));
    const started = new Promise<{ statusUrl: string; clientUrl: string }>((resolve) => {
      lines.on('line', (line) => {
        try {
          const value = JSON.parse(line) as {
            event?: string;
            statusUrl?: string;
            clientUrl?: string;
            name?: string;
            error?: string;
            digests?: Record<string, unknown>;
          };
          if (value.event === 'started' && value.statusUrl && value.clientUrl)
            resolve({ statusUrl: value.statusUrl, clientUrl: value.clientUrl });
          if (value.event === 'restore-refused')
            refusal = {
              name: value.name ?? 'RestoreRefused',
              error: value.error ?? 'no reason',
              ...(value.digests ? { details: value.digests } : {}),
            };
        } catch {
          // Not one of the sidecar's JSON lines: ignored.
        }
      });
    });
    const timeoutMs = launch.startTimeoutMs ?? 60_000;
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      started.then((addresses) => ({ kind: 'started' as const, addresses })),
      group.exited.then((exit) => ({ kind: 'exited' as const, exit })),
      new Promise<{ kind: 'timeout' }>(
        (resolve) => (timer = setTimeout(() => resolve({ kind: 'timeout' }), timeoutMs)),
      ),
    ]);
    clearTimeout(timer);
    if (outcome.kind === 'started')
      return new SidecarProcess(group, outcome.addresses.statusUrl, outcome.addresses.clientUrl);
    await group.stop({ timeoutMs: 2_000 });
    // The refusal line may still be in the pipe when the exit is seen: read to its end (bounded).
    if (outcome.kind === 'exited') await Promise.race([linesClosed, sleep(1_000)]);
    if (refusal !== undefined)
      throw new RestoreRefusedError(
        `the backup-restore sidecar of ${launch.technicalID} refused its restore (${refusal.name}): ${refusal.error}`,
        refusal.name,
        refusal.details,
      );
    const why =
      outcome.kind === 'exited'
        ? `exited (code ${outcome.exit.code}, signal ${outcome.exit.signal})`
        : `did not report within ${timeoutMs} ms`;
    throw new LocalProcessError(
      `the backup-restore sidecar of ${launch.technicalID} ${why}: ${lastLines(tail)} (log ${launch.logFile})`,
      launch.technicalID,
    );
  }

  get running(): boolean {
    return this.group.running;
  }

  /** Resolves when the sidecar process exits, for whatever reason. */
  get exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return this.group.exited;
  }

  get pid(): number | undefined {
    return this.group.pid;
  }

  /** The sidecar's `/status`, or undefined when it does not answer. */
  async status(timeoutMs = 1_000): Promise<SidecarStatus | undefined> {
    try {
      const res = await fetch(`${this.statusUrl}/status`, { signal: AbortSignal.timeout(timeoutMs) });
      return res.ok ? ((await res.json()) as SidecarStatus) : undefined;
    } catch {
      // Not answering is a status too: the caller reports etcd unavailable.
      return undefined;
    }
  }

  /**
   * A full snapshot now (before hibernation): `not-serving` when the sidecar does not serve as owner (a
   * fenced etcd takes no snapshot); a failure to answer throws.
   */
  async fullSnapshot(timeoutMs = 60_000): Promise<'taken' | 'not-serving'> {
    const res = await fetch(`${this.statusUrl}/snapshot/full`, {
      method: 'POST',
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (res.status === 409) return 'not-serving';
    if (!res.ok) throw new Error(`the sidecar answered ${res.status} to a full snapshot`);
    return 'taken';
  }

  /**
   * Catches a restore ahead up (`POST /restore/catch-up`): the restore's result, `not-ahead` when this
   * sidecar holds no restore ahead (409). Snapshots that do not restore to the revision (422) throw
   * `CatchUpError` with `refused` set; so does any other failure, without it: the caller restores instead.
   */
  async catchUp(input: {
    expectedLastRevision?: number;
    acceptDigestMismatch?: boolean;
    timeoutMs?: number;
  }): Promise<CatchUpResult | 'not-ahead'> {
    const query = new URLSearchParams({
      ...(input.expectedLastRevision === undefined ? {} : { expectedLastRevision: String(input.expectedLastRevision) }),
      ...(input.acceptDigestMismatch ? { acceptDigestMismatch: 'true' } : {}),
    }).toString();
    const res = await fetch(`${this.statusUrl}/restore/catch-up${query === '' ? '' : `?${query}`}`, {
      method: 'POST',
      signal: AbortSignal.timeout(input.timeoutMs ?? 120_000),
    });
    const body = (await res.json().catch(() => ({}))) as {
      restore?: CatchUpResult;
      error?: string;
      name?: string;
      digests?: Record<string, unknown>;
    };
    if (res.status === 409) return 'not-ahead';
    if (res.ok && body.restore) return body.restore;
    throw new CatchUpError(
      `the catch-up of ${this.statusUrl} answered ${res.status}: ${body.error ?? 'no reason'}`,
      res.status === 422 ? (body.name ?? 'RestoreRefused') : undefined,
      body.digests ? { details: body.digests } : {},
    );
  }

  /**
   * Refreshes a restore ahead with what the bucket holds now and keeps it in standby (`POST /restore/refresh`):
   * the result, `not-ahead` when this sidecar holds no restore ahead or its catch-up began (409). Any other
   * failure throws: etcd stays where the refresh got to, and the catch-up goes on from there.
   */
  async refreshAhead(timeoutMs = 120_000): Promise<CatchUpResult | 'not-ahead'> {
    const res = await fetch(`${this.statusUrl}/restore/refresh`, {
      method: 'POST',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await res.json().catch(() => ({}))) as { restore?: CatchUpResult; error?: string };
    if (res.status === 409) return 'not-ahead';
    if (res.ok && body.restore) return body.restore;
    throw new CatchUpError(`the refresh of ${this.statusUrl} answered ${res.status}: ${body.error ?? 'no reason'}`);
  }

  /** An owner-change notice (`POST /owner-check`): true when the sidecar took it; never throws (it still polls). */
  async noticeOwnerChange(timeoutMs = 1_000): Promise<boolean> {
    return noticeSidecar(this.statusUrl, timeoutMs);
  }

  /** Graceful: the sidecar stops etcd and its snapshotter; the group is killed after the timeout either way. */
  async stop(timeoutMs = 10_000): Promise<void> {
    await this.group.stop({ timeoutMs });
  }

  /** A crash, for tests: SIGKILL to the sidecar alone (etcd would be orphaned if the group were not killed next). */
  kill(): void {
    this.group.signal('SIGKILL');
  }
}

function lastLines(text: string): string {
  return text.trim().split('\n').slice(-3).join(' | ');
}

/** Sends one owner-change notice to a sidecar's status endpoint; true when it was taken (202). */
export async function noticeSidecar(statusUrl: string, timeoutMs = 1_000): Promise<boolean> {
  try {
    const res = await fetch(`${statusUrl}/owner-check`, { method: 'POST', signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.status === 202;
  } catch {
    // A sidecar that does not answer learns of the change at its next poll.
    return false;
  }
}
