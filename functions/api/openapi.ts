import { OpenAPIRegistry, OpenApiGeneratorV3 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { routes as defaultRoutes, type Route } from './routes.js';

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
            content: Object.fromEntries((route.bodyContentTypes ?? ['application/json']).map((t) => [t, { schema: route.body! }])),
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
        Object.entries(route.responses).map(([status, r]) => [
          status,
          { description: r.description, ...(r.schema ? { content: { 'application/json': { schema: r.schema } } } : {}) },
        ]),
      ),
    });
  }
  const generator = new OpenApiGeneratorV3(registry.definitions);
  return generator.generateDocument({
    openapi: '3.0.3',
    info: {
      title: API_TITLE,
      version: options.version,
      description: 'Seeds, shoots and control-plane migration without split brain (Gardener GEP-7, GEP-17, GEP-20).',
    },
  }) as unknown as Record<string, unknown>;
}
