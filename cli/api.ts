import type { GardenClient, GardenResponse } from '../adapters/http/garden-client.js';
import { clientFor, targetFor, type CliOptions } from './config.js';

/** The API answered with an error status; `body` is its JSON error. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(apiErrorLine(status, body));
    this.name = 'ApiError';
  }
}

/** The request never got an answer: no credentials to sign it, no connection, a timeout. */
export class ApiUnreachableError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'ApiUnreachableError';
  }
}

/** An API error as one line: `error 409 MigrationRunning: ... (field spec.x)`. */
export function apiErrorLine(status: number, body: unknown): string {
  const err = (typeof body === 'object' && body !== null ? body : {}) as {
    code?: string;
    message?: string;
    field?: string;
  };
  return `error ${status} ${err.code ?? ''}: ${err.message ?? String(body)}${err.field ? ` (field ${err.field})` : ''}`;
}

/** The innermost cause's words: `connect ECONNREFUSED 127.0.0.1:4566` rather than `fetch failed`. */
export function rootCause(error: unknown): string {
  let e: unknown = error;
  const seen = new Set<unknown>();
  while (e instanceof Error && e.cause !== undefined && !seen.has(e.cause)) {
    seen.add(e);
    e = e.cause;
  }
  if (e instanceof AggregateError && e.errors.length > 0) return e.errors.map((x) => rootCause(x)).join('; ');
  if (e instanceof Error)
    return (e as { code?: string }).code && !e.message.includes((e as { code?: string }).code!)
      ? `${(e as { code?: string }).code}: ${e.message}`
      : e.message;
  return String(e);
}

/** Why a request got no answer, naming the host and the cause. */
export function unreachable(error: unknown, url: URL): ApiUnreachableError {
  const name = error instanceof Error ? error.name : '';
  const host = url.host;
  if (name === 'CredentialsProviderError' || /credentials/i.test(error instanceof Error ? error.message : '')) {
    return new ApiUnreachableError(
      `no AWS credentials to sign requests to ${host} (${rootCause(error)}): set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or start the local landscape with npm start`,
      { cause: error },
    );
  }
  if (name === 'TimeoutError' || name === 'AbortError')
    return new ApiUnreachableError(`the garden API at ${host} did not answer in time (${rootCause(error)})`, {
      cause: error,
    });
  return new ApiUnreachableError(`cannot reach the garden API at ${host}: ${rootCause(error)}`, { cause: error });
}

type RequestOptions = { body?: unknown; query?: Record<string, string>; headers?: Record<string, string> };

/** The garden API as the CLI uses it: errors that say which host and why, and calls that expect success. */
export class Api {
  private constructor(
    private readonly client: GardenClient,
    readonly url: URL,
  ) {}

  static async connect(options: Pick<CliOptions, 'apiUrl' | 'region'>): Promise<Api> {
    return new Api(await clientFor(options), new URL(targetFor(options).apiUrl));
  }

  /** Any answer; throws ApiUnreachableError when there is none. */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<GardenResponse<T>> {
    try {
      return await this.client.request<T>(method, path, options);
    } catch (error) {
      throw unreachable(error, this.url);
    }
  }

  /** A 2xx answer's body; any other status throws ApiError. */
  async expect<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const res = await this.request<T>(method, path, options);
    if (res.status < 200 || res.status >= 300) throw new ApiError(res.status, res.body);
    return res.body;
  }

  /** Every page of a list. */
  async listAll<T>(path: string): Promise<T[]> {
    const items: T[] = [];
    let token: string | undefined;
    do {
      const page = await this.expect<{ items: T[]; metadata: { continue?: string } }>('GET', path, {
        query: { limit: '500', ...(token ? { continue: token } : {}) },
      });
      items.push(...page.items);
      token = page.metadata.continue;
    } while (token);
    return items;
  }

  /** The underlying client, for the migration watch. */
  get raw(): GardenClient {
    return this.client;
  }
}
