import { OwnerRecordNameError } from './errors.js';

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const MAX_NAME_LENGTH = 253;

export interface OwnerRecordNameInput {
  readonly shoot: string;
  readonly project: string;
  /** The garden's internal domain, for example `internal.gardenless.example`; a trailing dot is allowed. */
  readonly internalDomain: string;
}

/**
 * `owner.<shoot>.<project>.<internal-domain>`, lower case, without the trailing dot. Every label must be
 * a DNS label and the whole name at most 253 characters, or Route 53 and resolvers would reject it
 * only at run time, in the middle of a migration.
 */
export function ownerRecordName(input: OwnerRecordNameInput): string {
  const domain = input.internalDomain.toLowerCase().replace(/\.$/, '');
  checkLabel(input.shoot, 'shoot');
  checkLabel(input.project, 'project');
  if (domain.length === 0) throw new OwnerRecordNameError('internal domain must not be empty', { field: 'internalDomain' });
  for (const label of domain.split('.')) checkLabel(label, 'internalDomain', domain);
  const name = `owner.${input.shoot}.${input.project}.${domain}`;
  if (name.length > MAX_NAME_LENGTH) {
    throw new OwnerRecordNameError(`owner record name ${name} is ${name.length} characters, more than the ${MAX_NAME_LENGTH} DNS allows`, { field: 'internalDomain' });
  }
  return name;
}

function checkLabel(label: string, field: string, whole: string = label): void {
  if (label.length === 0 || label.length > 63 || !LABEL.test(label)) {
    throw new OwnerRecordNameError(
      `${field} "${whole}" is not usable in a DNS name: each label must be 1-63 lower-case letters, digits or "-", starting and ending with a letter or digit`,
      { field },
    );
  }
}
