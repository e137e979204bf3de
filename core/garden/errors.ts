import { AdmissionError } from '../errors.js';

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
