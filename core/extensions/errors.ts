import { DomainError } from '../errors.js';
import type { ExtensionKind } from './resource.js';

/** No actuator is registered for the resource's kind: a runtime misconfiguration, never retried. */
export class ActuatorMissingError extends DomainError {
  constructor(readonly kind: ExtensionKind) {
    super(`no actuator is registered for extension kind ${kind}`, 'ActuatorMissing');
  }
}

/** An actuator failed; `operation` and the resource identity say which, `cause` says why. */
export class ExtensionOperationError extends DomainError {
  constructor(
    message: string,
    readonly details: {
      kind: ExtensionKind;
      name: string;
      namespace: string;
      operation: 'reconcile' | 'migrate' | 'restore' | 'delete';
    },
    options?: { cause?: unknown },
  ) {
    super(message, 'ExtensionOperationFailed', options);
  }
}

/** A restore of a kind that cannot work without state found none (it would create new infrastructure). */
export class MissingExtensionStateError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'MissingExtensionState', options);
  }
}
