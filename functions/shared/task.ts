import middy from '@middy/core';
import type { z } from 'zod';
import { observability } from './observability.js';
import { namedTaskErrors } from './task-errors.js';

/**
 * A state-machine task: parses its input with the schema, runs one core or adapter call, and fails
 * with a named error (see task-errors.ts) that the state machine's Retry and Catch match. Logged, traced
 * and measured like every function (observability.ts).
 */
export function task<S extends z.ZodType, R>(schema: S, run: (input: z.infer<S>) => Promise<R>) {
  async function handle(event: unknown): Promise<R> {
    return run(schema.parse(event));
  }
  return middy(handle).use(observability()).use(namedTaskErrors());
}
