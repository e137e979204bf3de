import { shootDnsName } from '../dns/name.js';
import { OwnerRecordNameError } from './errors.js';

export interface OwnerRecordNameInput {
  readonly shoot: string;
  readonly project: string;
  /** The garden's internal domain, for example `internal.gardenless.example`; a trailing dot is allowed. */
  readonly internalDomain: string;
}

/** `owner.<shoot>.<project>.<internal-domain>`, lower case, without the trailing dot (see `shootDnsName`). */
export function ownerRecordName(input: OwnerRecordNameInput): string {
  return shootDnsName({
    prefix: 'owner',
    shoot: input.shoot,
    project: input.project,
    domain: input.internalDomain,
    domainField: 'internalDomain',
    what: 'owner record name',
    invalid: (message, field) => new OwnerRecordNameError(message, { field }),
  });
}
