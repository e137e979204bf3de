import middy from '@middy/core';
import { z } from 'zod';
import { DynamoGardenRepository } from '../../adapters/dynamodb/garden-repository.js';
import { GardenService } from '../../core/garden/service.js';
import { parseInput } from '../../core/garden/validate.js';
import { dns1123Label } from '../../core/model/names.js';
import { logger } from '../shared/logger.js';
import { observability } from '../shared/observability.js';
import { requireEnv, schedulingPolicyFromEnv } from '../shared/env.js';
import { NoSeedAvailableError } from './errors.js';

const input = z
  .object({ project: dns1123Label, name: dns1123Label, excludeSeeds: z.array(dns1123Label).max(1_000).optional() })
  .strict();

const service = new GardenService({
  repository: new DynamoGardenRepository({ tableName: requireEnv('TABLE_NAME') }),
  scheduling: schedulingPolicyFromEnv(),
});

export interface DestinationChoice {
  seedName: string;
  summary: string;
  candidates: { name: string; rank: number; score: number }[];
}

/**
 * Chooses a migration destination for a shoot (the migrate-shoot state machine calls it when no
 * destination was given). Throws NoSeedAvailableError, which the state machine catches by name.
 */
async function chooseDestination(event: unknown): Promise<DestinationChoice> {
  const { project, name, excludeSeeds } = parseInput(input, event);
  const result = await service.chooseDestination(project, name, excludeSeeds ?? []);
  logger.info('destination decision', { project, shoot: name, seedName: result.seedName, summary: result.summary });
  if (!result.seedName) throw new NoSeedAvailableError(`no seed can host shoot ${project}/${name}: ${result.summary}`, result.rejected);
  return {
    seedName: result.seedName,
    summary: result.summary,
    candidates: result.candidates.slice(0, 5).map(({ name: n, rank, score }) => ({ name: n, rank, score })),
  };
}

export const handler = middy(chooseDestination).use(observability());
