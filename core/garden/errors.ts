import { AdmissionError, ConflictError } from '../errors.js';
import type { Seed } from '../model/seed.js';

/** The seed a shoot should be placed on is missing, being deleted, or has no room. */
export class SeedUnavailableError extends AdmissionError {
  constructor(
    message: string,
    readonly seedName: string,
    readonly reason: 'NotFound' | 'Deleting' | 'Full',
  ) {
    super(message, { field: 'spec.seedName', code: `Seed${reason}` });
  }
}

/** The agent of a seed that is deleted still reports control planes: they would run on with nobody to migrate them. */
export function hostsControlPlanes(name: string, count: number, current?: Seed): ConflictError {
  return new ConflictError(
    `seed "${name}" still hosts ${count} control plane(s) by its agent's last report; delete or migrate them first`,
    {
      code: 'SeedHostsControlPlanes',
      ...(current ? { current } : {}),
    },
  );
}
