import { z } from 'zod';
import type { EvacuationControls } from '../../core/evacuation/controls.js';
import { ACTIVE_PHASES } from '../../core/evacuation/record.js';
import { dns1123Label } from '../../core/model/names.js';
import { parseInput } from '../../core/garden/validate.js';
import { HttpError, json } from './http.js';
import type { Route, RouteContext } from './route.js';
import { errorBody, notFoundBody } from './schemas.js';

const phase = z.enum(['Running', 'Paused', 'Cancelling', 'Stopping', 'Completed', 'Cancelled', 'Stopped']);

export const evacuationResource = z
  .object({
    apiVersion: z.literal('core.gardenless.io/v1'),
    kind: z.literal('Evacuation'),
    id: z.string(),
    seed: z.string(),
    lastRenewTime: z.string().describe("The lost lease's last renewal: the loss this evacuation answers."),
    lostSince: z.string(),
    phase: phase.describe(`Active while ${ACTIVE_PHASES.join(', ')}; moves under way always finish.`),
    reason: z.string().optional(),
    held: z.string().optional().describe('Why no move starts now: too many seeds lost their lease together.'),
    maxParallel: z.number().int(),
    shoots: z.array(
      z.object({
        project: z.string(),
        name: z.string(),
        state: z.enum(['Pending', 'Migrating', 'Moved', 'Failed', 'Gone']),
        priority: z.number().int(),
        destination: z.string().optional(),
        migrationId: z.string().optional(),
        reason: z.string().optional(),
        startedAt: z.string().optional(),
        endedAt: z.string().optional(),
      }),
    ),
    createdAt: z.string(),
    updatedAt: z.string(),
    endedAt: z.string().optional(),
    version: z.number().int(),
  })
  .meta({ id: 'Evacuation', description: 'The latest evacuation of a seed (docs/design.md section 13).' });

const evacuationList = z.object({ items: z.array(evacuationResource) }).meta({ id: 'EvacuationList' });
const listQuery = z.object({ active: z.enum(['true', 'false']).optional() }).strict();
const seed = { name: dns1123Label };
// The NotFound schema: API Gateway answers a path it routes nowhere (control characters) with its own body.
const notFound = { description: 'The seed was never evacuated', schema: notFoundBody };
const malformed = { description: 'Malformed request', schema: errorBody };

/** GET the evacuations, GET one seed's, and the operator's pause, resume and cancel (moves under way finish). */
export const evacuationRoutes: Route[] = [
  {
    method: 'GET',
    path: '/evacuations',
    operationId: 'listEvacuations',
    access: { viewer: true },
    summary: 'The latest evacuation of every seed ever evacuated',
    tags: ['evacuation'],
    query: listQuery,
    responses: { 200: { description: 'The evacuations', schema: evacuationList }, 400: malformed },
    handle: async ({ evacuations, query }) =>
      json(200, {
        items: await controlsOf(evacuations).list({ active: parseInput(listQuery, query).active === 'true' }),
      }),
  },
  {
    method: 'GET',
    path: '/seeds/{name}/evacuation',
    operationId: 'getEvacuation',
    access: { viewer: true },
    summary: "The seed's current or last evacuation, shoot by shoot",
    tags: ['evacuation'],
    params: seed,
    responses: { 200: { description: 'The evacuation', schema: evacuationResource }, 400: malformed, 404: notFound },
    handle: async ({ evacuations, params }) => json(200, await controlsOf(evacuations).get(params.name!)),
  },
  ...(['pause', 'resume', 'cancel'] as const).map((control): Route => ({
    method: 'POST',
    path: `/seeds/{name}/evacuation/${control}`,
    operationId: `${control}Evacuation`,
    summary: {
      pause: "Pause the seed's evacuation: no new move starts; moves under way finish",
      resume: 'Resume a paused evacuation',
      cancel: "Cancel the seed's evacuation: no new move starts; moves under way finish, then it ends Cancelled",
    }[control],
    tags: ['evacuation'],
    params: seed,
    responses: {
      200: {
        description: 'The evacuation after the change (unchanged when it is in that state already)',
        schema: evacuationResource,
      },
      400: malformed,
      404: notFound,
      409: {
        description: 'The evacuation is in a phase this control does not apply to (EvacuationNotControllable)',
        schema: errorBody,
      },
    },
    handle: async ({ evacuations, params, actor }) =>
      json(200, await controlsOf(evacuations).control(params.name!, control, { by: actor.kind })),
  })),
];

function controlsOf(evacuations: RouteContext['evacuations']): EvacuationControls {
  if (!evacuations) throw new HttpError(404, 'NotFound', 'this deployment has no evacuation controller');
  return evacuations;
}
