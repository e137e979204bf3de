import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson as send, serveHttp, type HttpEndpoint } from '../http-endpoint.js';

/** What the HTTP endpoint needs from the sidecar. */
export interface StatusSource {
  readiness(): 200 | 503;
  status(): unknown;
  /** Only while serving; undefined when nothing was taken (an empty delta). */
  triggerSnapshot(kind: 'full' | 'delta'): Promise<unknown>;
  /** An owner-change notice: brings the next owner check forward; undefined when the watchdog does not run. */
  noticeOwnerChange(): { checkInMs: number } | undefined;
  /** Catches a restore ahead up (the migration's restore); rejects with `CatchUpRefusedError` where there is none. */
  catchUp(expectedLastRevision?: number, options?: { acceptDigestMismatch?: boolean }): Promise<unknown>;
  /** Refreshes a restore ahead and stays in standby; rejects with `CatchUpRefusedError` where there is none. */
  refreshAhead(): Promise<unknown>;
}

export type StatusServer = HttpEndpoint;

/**
 * Readiness and status on loopback:
 * - `GET /healthz`, `GET /readyz`: 200 when etcd serves as owner, else 503 (etcd's readiness probe);
 * - `GET /status`: 200 with the sidecar's state as JSON;
 * - `POST /snapshot/full`, `POST /snapshot/delta`: take one now (409 unless serving);
 * - `POST /owner-check`: an owner-change notice (202 with when the check runs; 503 while the watchdog does
 *   not run). Only from loopback: the seed agent on the same machine sends it (403 otherwise), even where
 *   the endpoint listens wider for the kubelet's readiness probes.
 * - `POST /restore/catch-up[?expectedLastRevision=N][&acceptDigestMismatch=true]`: catch a restore ahead up
 *   and serve as owner (200 with the restore's result; 409 when etcd was not restored ahead here; 422 when
 *   the snapshots do not restore to N, or to the key space the source's snapshot names: `digests` then
 *   holds both). Loopback only, as the notice.
 */
export async function startStatusServer(input: {
  source: StatusSource;
  host?: string;
  port?: number;
}): Promise<StatusServer> {
  return serveHttp({
    handle: (req, res) => handle(input.source, req, res),
    ...(input.host === undefined ? {} : { host: input.host }),
    ...(input.port === undefined ? {} : { port: input.port }),
  });
}

async function handle(source: StatusSource, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'GET' && (path === '/healthz' || path === '/readyz')) {
    const code = source.readiness();
    return send(res, code, { ready: code === 200 });
  }
  if (req.method === 'GET' && path === '/status') return send(res, 200, await source.status());
  if (req.method === 'POST' && (path === '/snapshot/full' || path === '/snapshot/delta')) {
    if (source.readiness() !== 200)
      return send(res, 409, { error: 'not serving as owner: the watchdog decides about snapshots now' });
    const taken = await source.triggerSnapshot(path === '/snapshot/full' ? 'full' : 'delta');
    return send(res, 200, { snapshot: taken ?? null });
  }
  if (req.method === 'POST' && path === '/owner-check') {
    if (!isLoopback(req.socket.remoteAddress))
      return send(res, 403, { error: 'owner-change notices are taken from loopback only' });
    const scheduled = source.noticeOwnerChange();
    if (scheduled === undefined) return send(res, 503, { error: 'the owner watchdog does not run' });
    return send(res, 202, { checkInMs: Math.round(scheduled.checkInMs) });
  }
  if (req.method === 'POST' && path === '/restore/catch-up') {
    if (!isLoopback(req.socket.remoteAddress))
      return send(res, 403, { error: 'a catch-up is taken from loopback only' });
    const raw = new URL(req.url ?? '/', 'http://status').searchParams.get('expectedLastRevision');
    const expected = raw === null ? undefined : Number(raw);
    if (expected !== undefined && !(Number.isSafeInteger(expected) && expected >= 0))
      return send(res, 400, { error: `expectedLastRevision must be a non-negative integer, got ${raw}` });
    const accept = new URL(req.url ?? '/', 'http://status').searchParams.get('acceptDigestMismatch') === 'true';
    return sendRestore(res, () => source.catchUp(expected, accept ? { acceptDigestMismatch: true } : {}));
  }
  if (req.method === 'POST' && path === '/restore/refresh') {
    if (!isLoopback(req.socket.remoteAddress))
      return send(res, 403, { error: 'a refresh is taken from loopback only' });
    return sendRestore(res, () => source.refreshAhead());
  }
  send(res, 404, { error: `no route ${req.method} ${path}` });
}

async function sendRestore(res: ServerResponse, restore: () => Promise<unknown>): Promise<void> {
  try {
    return send(res, 200, { restore: await restore() });
  } catch (error) {
    const name = error instanceof Error ? error.name : 'Error';
    const status = name === 'CatchUpRefusedError' ? 409 : RESTORE_REFUSALS.has(name) ? 422 : 500;
    const digests = (error as { digests?: unknown }).digests;
    return send(res, status, {
      error: error instanceof Error ? error.message : String(error),
      name,
      ...(digests === undefined ? {} : { digests }),
    });
  }
}

/** Snapshots that do not restore to what was asked: the caller's data, not this server, is at fault. */
export const RESTORE_REFUSALS: ReadonlySet<string> = new Set([
  'NoFullSnapshotError',
  'RestorePlanGapError',
  'RestorePlanIncompleteError',
  'RestoreRevisionError',
  'RestoreDigestError',
]);

function isLoopback(address: string | undefined): boolean {
  return (
    address !== undefined && (address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.'))
  );
}
