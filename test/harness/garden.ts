import { inject } from 'vitest';
import { gardenClients, type GardenClients } from '../../harness/garden.js';

/** Clients of the stack the global setup deployed. */
export function testGarden(): GardenClients {
  return gardenClients(inject('deployment'));
}
