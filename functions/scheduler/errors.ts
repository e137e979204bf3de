import type { Rejection } from '../../core/scheduling/schedule.js';

/** Thrown by the scheduler Lambda; the migration state machine catches it by this name. */
export class NoSeedAvailableError extends Error {
  override readonly name = 'NoSeedAvailableError';
  constructor(
    message: string,
    readonly rejected: Rejection[],
  ) {
    super(message);
  }
}
