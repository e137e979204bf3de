import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import {
  AdmissionError,
  ConflictError,
  DomainError,
  ForbiddenError,
  NotFoundError,
  UnavailableError,
  ValidationError,
} from '../../core/errors.js';

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;

/** The API's error body (docs/design.md section 3). */
export interface ErrorBody {
  code: string;
  message: string;
  field?: string;
}

/** An error that already knows its HTTP status: protocol-level problems the domain never sees. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): HttpResult {
  return {
    statusCode: status,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  };
}

export function errorResult(error: unknown): HttpResult | undefined {
  if (error instanceof HttpError)
    return json(error.status, { code: error.code, message: error.message }, error.headers);
  if (!(error instanceof DomainError)) return undefined;
  const status =
    error instanceof ValidationError
      ? 400
      : error instanceof NotFoundError
        ? 404
        : error instanceof ConflictError
          ? 409
          : error instanceof AdmissionError
            ? 422
            : error instanceof ForbiddenError
              ? 403
              : error instanceof UnavailableError
                ? 503
                : undefined;
  if (status === undefined) return undefined;
  const body: ErrorBody = { code: error.code, message: error.message, ...(error.field ? { field: error.field } : {}) };
  return json(status, body, status === 503 ? { 'retry-after': '1' } : {});
}
