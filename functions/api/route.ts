import type { z } from 'zod';
import type { EvacuationControls } from '../../core/evacuation/controls.js';
import type { ShootKubeconfigs } from '../../core/garden/kubeconfigs.js';
import type { GardenService } from '../../core/garden/service.js';
import type { MigrationAdmission } from '../../core/migration/migration-admission.js';
import type { Seed } from '../../core/model/seed.js';
import type { Actor, RouteAccess } from './access.js';
import type { HttpResult } from './http.js';

export type Method = 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE';

export interface RouteContext {
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  body: unknown;
  service: GardenService;
  /** Absent where the deployment has no migration workflow (unit tests of the pipeline). */
  migrations?: MigrationAdmission;
  /** Absent where the deployment has no evacuation controller (unit tests of the pipeline). */
  evacuations?: EvacuationControls;
  version: string;
  /** Absent where the deployment issues no kubeconfigs (unit tests of the pipeline). */
  kubeconfigs?: ShootKubeconfigs;
  /** The caller, as the gateway authenticated it (operator for public routes). */
  actor: Actor;
  /** The authenticated principal's ARN, when the gateway named one: the user a kubeconfig's certificate names. */
  caller?: string;
  onHeartbeat?: (seed: Seed) => void;
}

/** One operation of the API. The same table drives the router and the OpenAPI document. */
export interface Route {
  method: Method;
  path: string;
  operationId: string;
  summary: string;
  tags: string[];
  /** Path parameters and their schema; every name in `path` must be here. */
  params?: Record<string, z.ZodType>;
  query?: z.ZodObject;
  body?: z.ZodType;
  bodyContentTypes?: string[];
  /** Where a route's body may be larger than `MAX_BODY_BYTES` (a seed's heartbeat, which lists its planes). */
  maxBodyBytes?: number;
  responses: Record<number, { description: string; schema?: z.ZodType }>;
  /** Public routes need no IAM signature (only /healthz). */
  public?: boolean;
  /** Who besides the operator may call it; the IAM policies of the actors are built from the same entries. */
  access?: RouteAccess;
  handle(ctx: RouteContext): Promise<HttpResult> | HttpResult;
}
