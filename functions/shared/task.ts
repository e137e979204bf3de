import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { z } from 'zod';
import { logger } from './logger.js';
import { namedTaskErrors } from './task-errors.js';

/**
 * A state-machine task: parses its input with the schema, runs one core or adapter call, and fails
 * with a named error (see task-errors.ts) that the state machine's Retry and Catch match.
 */
export function task<S extends z.ZodType, R>(schema: S, run: (input: z.infer<S>) => Promise<R>) {
  async function handle(event: unknown): Promise<R> {
    return run(schema.parse(event));
  }
  return middy(handle).use(injectLambdaContext(logger, { resetKeys: true })).use(namedTaskErrors());
}
