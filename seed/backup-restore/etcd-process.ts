import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { EtcdStartError } from './errors.js';
import { etcdFailure, OutputTail } from './etcd-log.js';

/** etcd's `--peer-cert-file`, `--peer-key-file` and `--peer-trusted-ca-file`. */
export interface EtcdPeerTls {
  certFile: string;
  keyFile: string;
  trustedCaFile: string;
}

/** The scheme of every peer URL of a member: TLS with peer certificates, or plain. */
export function peerScheme(peerTls: EtcdPeerTls | undefined): 'https' | 'http' {
  return peerTls ? 'https' : 'http';
}

/** The cluster a member belongs to; absent: a single-member cluster of its own. */
export interface EtcdClusterLaunch {
  /** Every member as `name=peerURL`, this one included (`--initial-cluster`). */
  readonly initialCluster: readonly { readonly name: string; readonly peerUrl: string }[];
  /** `new` bootstraps the cluster; `existing` joins one that runs (a member added with `member add`). */
  readonly state: 'new' | 'existing';
  /** Distinguishes this cluster from any other built from the same peer URLs (a restore makes a new one). */
  readonly token: string;
}

/** How one etcd member is started on loopback. Once its data dir holds a member, etcd ignores the initial-cluster flags. */
export interface EtcdLaunch {
  readonly binary: string;
  readonly name: string;
  readonly dataDir: string;
  readonly clientUrl: string;
  readonly peerUrl: string;
  /** ms. Short values make the single-member election after a restart quick. */
  readonly heartbeatInterval: number;
  readonly electionTimeout: number;
  readonly quotaBackendBytes?: number;
  /** Raise etcd's request limits to what a replayed revision may need (`REPLAY_LIMIT_ARGS`): only where no client of the shoot reaches it. */
  readonly replayLimits?: boolean;
  readonly extraArgs: readonly string[];
  readonly cluster?: EtcdClusterLaunch;
  /** Peer traffic as mutual TLS with these files; `peerUrl` and the initial cluster's are then https. */
  readonly peerTls?: EtcdPeerTls;
  /** Appended to; undefined discards etcd's output. */
  readonly logFile?: string;
}

/**
 * A replay writes each original revision as one transaction (seed/backup-restore/replay.ts), and one
 * revision may hold far more events than etcd's defaults take in a transaction (128 operations, 1.5 MiB):
 * a DeleteRange of a prefix or a lease's expiry deletes every key it covers in one revision. The etcd
 * that replays takes any number of operations and requests up to 512 MiB, as etcd-backup-restore's
 * restoring etcd raises them; where clients write (the public address) etcd keeps its defaults.
 */
export const REPLAY_LIMIT_ARGS: readonly string[] = [
  '--max-txn-ops',
  String(2 ** 32 - 1),
  '--max-request-bytes',
  String(512 * 1024 * 1024),
];

/** The command line of one etcd start; a pure function so tests can read it. */
export function etcdArgs(launch: EtcdLaunch): string[] {
  return [
    '--name',
    launch.name,
    '--data-dir',
    launch.dataDir,
    '--listen-client-urls',
    launch.clientUrl,
    '--advertise-client-urls',
    launch.clientUrl,
    '--listen-peer-urls',
    launch.peerUrl,
    '--initial-advertise-peer-urls',
    launch.peerUrl,
    ...clusterArgs(launch),
    ...peerTlsArgs(launch.peerTls),
    '--heartbeat-interval',
    String(launch.heartbeatInterval),
    '--election-timeout',
    String(launch.electionTimeout),
    // No metrics listener and no auto-compaction: the snapshotter's watch resumes from its last revision.
    ...(launch.quotaBackendBytes === undefined ? [] : ['--quota-backend-bytes', String(launch.quotaBackendBytes)]),
    ...(launch.replayLimits ? REPLAY_LIMIT_ARGS : []),
    ...launch.extraArgs,
  ];
}

/**
 * A peer is trusted only with a certificate from the shoot's etcd peer CA, for its connections to this
 * member as for this member's to it (`--peer-client-cert-auth`): a process that merely reaches the peer
 * port, on a seed's network or on the way between seeds, can neither join nor read raft's messages.
 */
function peerTlsArgs(tls: EtcdPeerTls | undefined): string[] {
  if (tls === undefined) return [];
  return [
    '--peer-cert-file',
    tls.certFile,
    '--peer-key-file',
    tls.keyFile,
    '--peer-trusted-ca-file',
    tls.trustedCaFile,
    '--peer-client-cert-auth=true',
  ];
}

function clusterArgs(launch: EtcdLaunch): string[] {
  const c = launch.cluster;
  if (c === undefined)
    return ['--initial-cluster', `${launch.name}=${launch.peerUrl}`, '--initial-cluster-state', 'new'];
  return [
    '--initial-cluster',
    c.initialCluster.map((m) => `${m.name}=${m.peerUrl}`).join(','),
    '--initial-cluster-state',
    c.state,
    '--initial-cluster-token',
    c.token,
  ];
}

/**
 * When a start counts as done: `healthy` waits for `/health` (a single member elects itself at once);
 * `listening` only for the client port to accept connections, since a cluster member serves nothing
 * until a quorum of its peers is up, which may be never while they are down.
 */
export type EtcdReadiness = 'healthy' | 'listening';

/** One running etcd process. */
export class EtcdProcess {
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  private readonly child: ChildProcess;
  private readonly log: WriteStream | undefined;
  private readonly tail = new OutputTail();
  /** Settles once etcd's output streams closed too: after `exit`, the last lines may still be on their way. */
  private readonly outputClosed: Promise<void>;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null; at: number } | undefined;

  private constructor(readonly launch: EtcdLaunch) {
    if (launch.logFile !== undefined) {
      mkdirSync(dirname(launch.logFile), { recursive: true });
      this.log = createWriteStream(launch.logFile, { flags: 'a' });
    }
    this.child = spawn(launch.binary, etcdArgs(launch), { stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [this.child.stdout, this.child.stderr]) {
      stream?.on('data', (chunk: Buffer) => this.tail.push(chunk));
      if (this.log) stream?.pipe(this.log, { end: false });
    }
    this.outputClosed = new Promise((resolve) => {
      this.child.once('close', () => resolve());
      this.child.once('error', () => resolve());
    });
    this.exited = new Promise((resolve) => {
      const done = (code: number | null, signal: NodeJS.Signals | null) => {
        this.exitInfo ??= { code, signal, at: performance.now() };
        this.log?.end();
        resolve(this.exitInfo);
      };
      this.child.once('exit', done);
      // A binary that cannot be spawned never exits; report it as an exit so waiters end.
      this.child.once('error', () => done(null, null));
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exitInfo === undefined;
  }

  /** Starts etcd and waits until `/health` answers true on its client URL (or, `listening`, until the port accepts). */
  static async start(
    launch: EtcdLaunch,
    options: { timeoutMs: number; readiness?: EtcdReadiness },
  ): Promise<EtcdProcess> {
    const etcd = new EtcdProcess(launch);
    try {
      if (options.readiness === 'listening') await etcd.waitListening(options.timeoutMs);
      else await etcd.waitHealthy(options.timeoutMs);
      return etcd;
    } catch (error) {
      await etcd.stop({ timeoutMs: 2_000 });
      throw error;
    }
  }

  private async exitedWhileStarting(): Promise<EtcdStartError> {
    await Promise.race([this.outputClosed, sleep(1_000)]);
    const reason = etcdFailure(this.tail.toString());
    return new EtcdStartError(
      `etcd exited while starting (code ${this.exitInfo?.code}, signal ${this.exitInfo?.signal})` +
        (reason === undefined ? '' : `: ${reason}`) +
        (this.launch.logFile ? `; see ${this.launch.logFile}` : ''),
      this.launch.clientUrl,
    );
  }

  private async waitListening(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    const { hostname, port } = new URL(this.launch.clientUrl);
    while (performance.now() < deadline) {
      if (!this.running) throw await this.exitedWhileStarting();
      if (await accepts(hostname, Number(port))) return;
      await sleep(20);
    }
    throw new EtcdStartError(
      `etcd at ${this.launch.clientUrl} not listening after ${timeoutMs} ms`,
      this.launch.clientUrl,
    );
  }

  /** Waits until `/health` answers true (a cluster member: until it has a leader); false after the timeout. */
  async healthyWithin(timeoutMs: number): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    while (this.running && performance.now() < deadline) {
      if (await etcdHealthy(this.launch.clientUrl, 1_000).catch(() => false)) return true;
      await sleep(50);
    }
    return false;
  }

  private async waitHealthy(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    let last: unknown;
    while (performance.now() < deadline) {
      if (!this.running) {
        throw await this.exitedWhileStarting();
      }
      if (await etcdHealthy(this.launch.clientUrl, 1_000).catch((error: unknown) => ((last = error), false))) return;
      await sleep(20);
    }
    throw new EtcdStartError(
      `etcd at ${this.launch.clientUrl} not healthy after ${timeoutMs} ms`,
      this.launch.clientUrl,
      { cause: last },
    );
  }

  /**
   * SIGTERM, then SIGKILL after the timeout. Resolves when the process is gone: from then on nothing
   * listens on its client URL, so no client can write. Returns when the exit happened (performance.now()).
   */
  async stop(options: { timeoutMs: number }): Promise<number> {
    if (!this.running) return this.exitInfo!.at;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), options.timeoutMs);
    try {
      return (await this.exited).at;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * etcd's own health endpoint on a client URL: `{"health":"true"}` once it has a leader and serves. The
 * alarms our sidecars raise do not count: `NOSPACE` is how the write guard makes etcd refuse puts,
 * `CORRUPT` how a fence refuses every write at once (and a snapshot taken meanwhile carries either),
 * while the member serves reads, fences, restores and elects as ever; plain `/health` answers false for
 * any alarm, which would keep a fenced or restored etcd from ever starting.
 */
export async function etcdHealthy(clientUrl: string, timeoutMs: number): Promise<boolean> {
  const res = await fetch(`${clientUrl}/health?exclude=NOSPACE&exclude=CORRUPT`, {
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) return false;
  const body = (await res.json()) as { health?: unknown };
  return body.health === 'true' || body.health === true;
}

/** Whether something accepts TCP connections on host:port. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
