import { spawn } from 'node:child_process';
import { EtcdctlError } from './errors.js';

/** What `etcdctl snapshot status` reports about a snapshot file. */
export interface SnapshotFileStatus {
  readonly hash: number;
  /** The revision the snapshot holds: exactly what a restore from it starts at. */
  readonly revision: number;
  readonly totalKey: number;
  readonly totalSize: number;
}

export interface EtcdctlOptions {
  /** Default `etcdctl`. */
  readonly binary?: string;
  /** Per command, ms. Default 5 min (a snapshot of a large etcd takes a while). */
  readonly timeoutMs?: number;
}

/** Runs etcdctl (API v3) and returns its stdout; a non-zero exit is `EtcdctlError` with stderr. */
export async function etcdctl(args: readonly string[], options: EtcdctlOptions = {}): Promise<string> {
  const binary = options.binary ?? 'etcdctl';
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { env: { ...process.env, ETCDCTL_API: '3' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 5 * 60_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(
        new EtcdctlError(
          `${binary} ${args.join(' ')} could not run: ${error.message}`,
          { args, exitCode: null, stderr: '' },
          { cause: error },
        ),
      );
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      const stderr = Buffer.concat(err).toString('utf8');
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else
        reject(
          new EtcdctlError(`${binary} ${args.slice(0, 3).join(' ')} failed (exit ${code}): ${lastLine(stderr)}`, {
            args,
            exitCode: code,
            stderr,
          }),
        );
    });
  });
}

/** Streams a snapshot of the member at `endpoint` into `file` (etcdctl writes `<file>.part` and renames it). */
export async function saveSnapshot(input: { endpoint: string; file: string } & EtcdctlOptions): Promise<void> {
  await etcdctl(['--endpoints', input.endpoint, '--dial-timeout', '2s', 'snapshot', 'save', input.file], input);
}

export async function snapshotStatus(input: { file: string } & EtcdctlOptions): Promise<SnapshotFileStatus> {
  const raw = await etcdctl(['snapshot', 'status', input.file, '--write-out', 'json'], input);
  const parsed = JSON.parse(raw) as Partial<SnapshotFileStatus>;
  if (typeof parsed.revision !== 'number') {
    throw new EtcdctlError(`etcdctl snapshot status ${input.file} reported no revision: ${raw.slice(0, 200)}`, {
      args: ['snapshot', 'status'],
      exitCode: 0,
      stderr: '',
    });
  }
  return parsed as SnapshotFileStatus;
}

/**
 * `etcdctl snapshot restore` into a data dir that must not exist yet. The hash appended by the snapshot
 * API is checked (a torn download fails here). Member name and peer URL must be those etcd starts with.
 */
export async function restoreSnapshot(
  input: {
    file: string;
    dataDir: string;
    name: string;
    peerUrl: string;
    cluster?: { initialCluster: readonly { name: string; peerUrl: string }[]; token: string };
  } & EtcdctlOptions,
): Promise<void> {
  // A member of a cluster is restored with every member and the new cluster's token (etcd's disaster recovery guide).
  const cluster = input.cluster;
  await etcdctl(
    [
      'snapshot',
      'restore',
      input.file,
      '--data-dir',
      input.dataDir,
      '--name',
      input.name,
      '--initial-cluster',
      cluster
        ? cluster.initialCluster.map((m) => `${m.name}=${m.peerUrl}`).join(',')
        : `${input.name}=${input.peerUrl}`,
      '--initial-advertise-peer-urls',
      input.peerUrl,
      ...(cluster ? ['--initial-cluster-token', cluster.token] : []),
    ],
    input,
  );
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return lines.at(-1)?.slice(0, 500) ?? '';
}
