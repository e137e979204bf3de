/**
 * The arithmetic of a shaped network link, as `startTcpProxy` applies it to each direction of each
 * connection (the model of netem's `delay` plus `rate`): a chunk is sent once the link is free, takes
 * `bytes / bytesPerSecond` to send, and arrives `latencyMs / 2` after it was sent. A request and its
 * response cross both directions, so each request pays `latencyMs` once, plus its bytes at the rate;
 * chunks queued on one connection share its rate, separate connections do not share anything.
 */

export interface LinkModel {
  /** Round-trip time a request pays on top of its transfer, in milliseconds (half of it each way). */
  readonly latencyMs: number;
  /** Rate of one direction of one connection, in bytes per second. */
  readonly bytesPerSecond: number;
}

export class LinkModelError extends Error {
  override readonly name = 'LinkModelError';
}

export function validateLinkModel(model: LinkModel): LinkModel {
  if (!Number.isFinite(model.latencyMs) || model.latencyMs < 0)
    throw new LinkModelError(`latencyMs must be a finite number >= 0, got ${model.latencyMs}`);
  if (!(model.bytesPerSecond > 0)) throw new LinkModelError(`bytesPerSecond must be > 0, got ${model.bytesPerSecond}`);
  return model;
}

/** Milliseconds the link needs to send `bytes`, latency excluded. */
export function transferMs(model: LinkModel, bytes: number): number {
  return (bytes / model.bytesPerSecond) * 1_000;
}

/** The model's time for one request on an idle connection: the round trip plus both bodies at the rate. */
export function requestMs(model: LinkModel, requestBytes: number, responseBytes: number): number {
  return model.latencyMs + transferMs(model, requestBytes) + transferMs(model, responseBytes);
}

/** One direction of one connection: when each chunk handed to it arrives on the other side. */
export class LinkDirection {
  private freeAt = -Infinity;

  constructor(private readonly model: LinkModel) {
    validateLinkModel(model);
  }

  /** The chunk of `bytes` handed over at `now` (ms) arrives at the returned time (ms); never before an earlier chunk. */
  send(now: number, bytes: number): number {
    const start = Math.max(now, this.freeAt);
    this.freeAt = start + transferMs(this.model, bytes);
    return this.freeAt + this.model.latencyMs / 2;
  }
}
