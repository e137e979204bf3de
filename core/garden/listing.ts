import type { Shoot } from '../model/shoot.js';
import type { GardenRepository } from './repository.js';

/** Every shoot of every project, page by page. */
export async function listAllShoots(repo: GardenRepository): Promise<Shoot[]> {
  const shoots: Shoot[] = [];
  let token: string | undefined;
  do {
    const page = await repo.listAllShoots({ limit: 500, ...(token ? { continue: token } : {}) });
    shoots.push(...page.items);
    token = page.continue;
  } while (token);
  return shoots;
}

/** Every shoot placed on one seed, page by page (the seed index: no other seed's shoots are read). */
export async function listAllShootsOnSeed(repo: GardenRepository, seedName: string): Promise<Shoot[]> {
  const shoots: Shoot[] = [];
  let token: string | undefined;
  do {
    const page = await repo.listShootsOnSeed(seedName, { limit: 500, ...(token ? { continue: token } : {}) });
    shoots.push(...page.items);
    token = page.continue;
  } while (token);
  return shoots;
}
