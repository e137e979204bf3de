import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { routes as defaultRoutes, type Route } from './routes.js';
import * as s from './schemas.js';

type Responses = Route['responses'];

/** The answers every route of its kind can give, so that the document lists them all; a route's own entries win. */
export function commonResponses(route: Route): Responses {
  const error = (description: string) => ({ description, schema: s.errorBody });
  const writes = route.method !== 'GET';
  const out: Responses = {};
  if (route.params || route.query || route.body)
    out[400] = error('Malformed request (bad name, query, JSON, field, Unicode or nesting)');
  // API Gateway answers {"message": "Not Found"} itself for a request it routes nowhere (any path can be one).
  out[404] = { description: 'Not found', schema: s.notFoundBody };
  if (!route.public)
    out[403] = {
      description: 'Refused: unsigned or not allowed by IAM (API Gateway), or not allowed for this caller (handler)',
      schema: s.gatewayError,
    };
  if (route.body) {
    out[413] = error('The body exceeds 256 KiB');
    out[415] = error('A content type this route does not accept');
  }
  if (!route.public) out[500] = error('Internal error; the request may be retried');
  if (writes && !route.public) out[503] = error('The resource kept changing while it was written; retry');
  return out;
}

export const API_TITLE = 'gardenless garden API';

/**
 * The OpenAPI 3 document, generated from the route table and the very schemas that validate
 * requests, so that the document and the behaviour cannot drift apart.
 */
export function openApiDocument(options: { version: string; routes?: readonly Route[] }): Record<string, unknown> {
  const registry = new OpenAPIRegistry();
  const sigv4 = registry.registerComponent('securitySchemes', 'sigv4', {
    type: 'apiKey',
    name: 'Authorization',
    in: 'header',
    description: 'AWS Signature Version 4 (IAM authorization, service execute-api). The emulator does not enforce it.',
  });
  for (const route of options.routes ?? defaultRoutes) {
    const jsonBody = route.body
      ? {
          body: {
            required: true,
            content: Object.fromEntries(
              (route.bodyContentTypes ?? ['application/json']).map((t) => [t, { schema: route.body! }]),
            ),
          },
        }
      : {};
    registry.registerPath({
      method: route.method.toLowerCase() as 'get',
      path: route.path,
      operationId: route.operationId,
      summary: route.summary,
      tags: route.tags,
      security: route.public ? [] : [{ [sigv4.name]: [] }],
      request: {
        ...(route.params ? { params: z.object(route.params) } : {}),
        ...(route.query ? { query: route.query } : {}),
        ...jsonBody,
      },
      responses: Object.fromEntries(
        Object.entries({ ...commonResponses(route), ...route.responses }).map(([status, r]) => [
          status,
          {
            description: r.description,
            ...(r.schema ? { content: { 'application/json': { schema: r.schema } } } : {}),
            ...(status === '503'
              ? {
                  headers: {
                    'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
                  },
                }
              : {}),
          },
        ]),
      ),
    });
  }
  const generator = new OpenApiGeneratorV31(registry.definitions);
  return generator.generateDocument({
    // 3.1: schemas are JSON Schema 2020-12, so `propertyNames` (label keys) is part of the contract.
    openapi: '3.1.0',
    info: {
      title: API_TITLE,
      version: options.version,
      description: [
        'Seeds, shoots and control-plane migration without split brain (Gardener GEP-7, GEP-17, GEP-20).',
        'Every route but /healthz needs IAM (SigV4) authorization: API Gateway answers 403 {"message"} to an unsigned or refused call,',
        'and the handler answers 403 Error when the caller (operator, viewer, seed agent) may not call the route.',
        'A method a path does not have is 405 with an Allow header; an unknown path is 404.',
        'Bodies: JSON at most 256 KiB (413), nested at most 32 levels, valid Unicode (400); other content types 415.',
      ].join(' '),
    },
  }) as unknown as Record<string, unknown>;
}
