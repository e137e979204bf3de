import { ValidationError } from '../errors.js';

/** Option checks shared by the prober, the weeder and the probe rounds. */
export function requirePositiveInteger(value: number, field: string): void {
  if (!Number.isInteger(value) || value < 1) {
    throw new ValidationError(`${field} must be a positive integer, got ${String(value)}`, { field });
  }
}

export function requirePositiveFinite(value: number, field: string): void {
  if (!Number.isFinite(value) || value <= 0) {
    throw new ValidationError(`${field} must be a positive number, got ${String(value)}`, { field });
  }
}

export function requireNonNegativeFinite(value: number, field: string): void {
  if (!Number.isFinite(value) || value < 0) {
    throw new ValidationError(`${field} must be a non-negative number, got ${String(value)}`, { field });
  }
}
