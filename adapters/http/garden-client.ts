import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { exchange } from './transport.js';

export interface GardenResponse<T = unknown> {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: T;
}

export interface GardenClientOptions {
  /** Base URL of the API, e.g. https://abc.execute-api.eu-west-1.amazonaws.com or the emulator's execute-api path. */
  apiUrl: string;
  region: string;
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  /** Sign requests with SigV4 (IAM authorization). On by default; off only to test that unsigned calls are refused. */
  sign?: boolean;
  timeoutMs?: number;
  /**
   * How often to resend a request the gateway answered 502 without reaching the API (a function that
   * failed to start): for set-up steps that are not what a test is about. Default 0.
   */
  gatewayRetries?: number;
}

/** A SigV4-signing HTTP client of the garden API, shared by the CLI, the seed agent, tests and benchmarks. */
export class GardenClient {
  private readonly base: URL;
  private readonly signer: SignatureV4;
  private readonly sign: boolean;
  private readonly timeoutMs: number;
  private readonly gatewayRetries: number;

  constructor(options: GardenClientOptions) {
    this.base = new URL(options.apiUrl.endsWith('/') ? options.apiUrl : `${options.apiUrl}/`);
    this.signer = new SignatureV4({
      service: 'execute-api',
      region: options.region,
      credentials: options.credentials ?? defaultCredentials(),
      sha256: Hash.bind(null, 'sha256'),
    });
    this.sign = options.sign ?? true;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.gatewayRetries = options.gatewayRetries ?? 0;
  }

  /** A client like this one that resends gateway 502s up to `retries` times. */
  withGatewayRetries(retries: number): GardenClient {
    const copy = Object.create(GardenClient.prototype) as GardenClient;
    Object.assign(copy, this, { gatewayRetries: retries });
    return copy;
  }

  /**
   * Sends one request. `body` is sent as JSON unless it is a string (sent as is, for malformed-input
   * tests). The response body is parsed as JSON when it is JSON, else returned as text.
   */
  async request<T = unknown>(
    method: string,
    path: string,
    options: { body?: unknown; query?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<GardenResponse<T>> {
    const url = new URL(path.replace(/^\//, ''), this.base);
    for (const [k, v] of Object.entries(options.query ?? {})) url.searchParams.set(k, v);
    const body =
      options.body === undefined
        ? undefined
        : typeof options.body === 'string'
          ? options.body
          : JSON.stringify(options.body);
    const headers: Record<string, string> = {
      host: url.host,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    };
    const query = Object.fromEntries(url.searchParams.entries());
    const signed = this.sign
      ? await this.signer.sign({
          method,
          protocol: url.protocol,
          hostname: url.hostname,
          port: url.port ? Number(url.port) : undefined,
          path: url.pathname,
          query,
          headers,
          body,
        })
      : { headers };
    // node sets Host from the URL itself, as it was signed.
    const { host: _host, ...sendHeaders } = signed.headers;
    const send = () =>
      exchange({
        method,
        url,
        headers: sendHeaders,
        ...(body !== undefined ? { body } : {}),
        timeoutMs: this.timeoutMs,
      });
    let res = await send();
    for (let attempt = 0; res.status === 502 && attempt < this.gatewayRetries; attempt++) {
      await new Promise((r) => setTimeout(r, 250 * 2 ** attempt));
      res = await send();
    }
    let parsed: unknown = res.text;
    if ((res.headers['content-type'] ?? '').includes('json')) {
      try {
        parsed = JSON.parse(res.text);
      } catch {
        // A gateway error page may claim JSON and not be; the caller gets the raw text to report.
        parsed = res.text;
      }
    }
    return { status: res.status, headers: res.headers, body: parsed as T };
  }
}

/**
 * The SDK's default credential chain, loaded on the first signature: a CLI call against the local
 * landscape (static test credentials) or `--help` never pays for loading it.
 */
function defaultCredentials(): AwsCredentialIdentityProvider {
  let provider: Promise<AwsCredentialIdentityProvider> | undefined;
  return async (options) => {
    provider ??= import('@aws-sdk/credential-provider-node').then((m) => m.defaultProvider());
    return (await provider)(options);
  };
}
