const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const MAX_NAME_LENGTH = 253;

export interface ShootDnsNameInput {
  /** The first label: `owner`, `api`. */
  readonly prefix: string;
  readonly shoot: string;
  readonly project: string;
  /** The domain the name lives under; a trailing dot and upper case are allowed. */
  readonly domain: string;
  /** The field the domain came from, for errors (`internalDomain`, `externalDomain`). */
  readonly domainField: string;
  /** What the name is, for errors (`owner record name`, `API domain`). */
  readonly what: string;
  /** Builds the validation error of the caller's kind. */
  readonly invalid: (message: string, field: string) => Error;
}

/**
 * `<prefix>.<shoot>.<project>.<domain>`, lower case, without the trailing dot. Every label must be a DNS
 * label and the whole name at most 253 characters, or Route 53 and resolvers would reject it only at run
 * time, in the middle of a migration.
 */
export function shootDnsName(input: ShootDnsNameInput): string {
  const domain = input.domain.toLowerCase().replace(/\.$/, '');
  checkLabel(input, input.shoot, 'shoot');
  checkLabel(input, input.project, 'project');
  if (domain.length === 0)
    throw input.invalid(`${input.domainField.replace(/Domain$/, ' domain')} must not be empty`, input.domainField);
  for (const label of domain.split('.')) checkLabel(input, label, input.domainField, domain);
  const name = `${input.prefix}.${input.shoot}.${input.project}.${domain}`;
  if (name.length > MAX_NAME_LENGTH) {
    throw input.invalid(
      `${input.what} ${name} is ${name.length} characters, more than the ${MAX_NAME_LENGTH} DNS allows`,
      input.domainField,
    );
  }
  return name;
}

function checkLabel(input: ShootDnsNameInput, label: string, field: string, whole: string = label): void {
  if (label.length === 0 || label.length > 63 || !LABEL.test(label)) {
    throw input.invalid(
      `${field} "${whole}" is not usable in a DNS name: each label must be 1-63 lower-case letters, digits or "-", starting and ending with a letter or digit`,
      field,
    );
  }
}
