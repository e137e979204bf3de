import {
  ChangeResourceRecordSetsCommand,
  ListResourceRecordSetsCommand,
  Route53Client,
  type Change,
  type ChangeResourceRecordSetsCommandInput,
  type ChangeResourceRecordSetsCommandOutput,
  type ListResourceRecordSetsCommandInput,
  type ListResourceRecordSetsCommandOutput,
} from '@aws-sdk/client-route-53';
import { ValidationError } from '../../core/errors.js';
import { awsErrorMessage, awsErrorName } from '../aws-errors.js';

/** Every Route 53 call the owner and API records make; the IAM policy follows from it. */
export interface Route53Api {
  changeResourceRecordSets(input: ChangeResourceRecordSetsCommandInput): Promise<ChangeResourceRecordSetsCommandOutput>;
  listResourceRecordSets(input: ListResourceRecordSetsCommandInput): Promise<ListResourceRecordSetsCommandOutput>;
}

/**
 * How every Route 53 client of the garden retries: Route 53 allows five API requests a second per account
 * (changes and lists alike) and answers more with `Throttling`; the SDK's adaptive mode backs off with
 * jitter and then rate-limits the client itself, and eight attempts ride out a burst of other callers
 * (an audit listing the zone while migrations change records).
 */
export const ROUTE53_RETRY = { retryMode: 'adaptive', maxAttempts: 8 } as const;

export function route53Api(client: Route53Client): Route53Api {
  return {
    changeResourceRecordSets: (input) => client.send(new ChangeResourceRecordSetsCommand(input)),
    listResourceRecordSets: (input) => client.send(new ListResourceRecordSetsCommand(input)),
  };
}

/** A record name as we compare it: Route 53 returns names with a trailing dot and escapes some characters as \NNN octal. */
export function normalizeRecordName(name: string): string {
  return name
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/\\(\d{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** How a store turns Route 53 failures into its own "try again later" error. */
export type Unavailable = (message: string, cause: unknown) => Error;

/**
 * One Route 53 call with the stores' error mapping: InvalidChangeBatch passes through (a condition
 * failed: the caller reads again), InvalidInput is a ValidationError, and everything else (throttling,
 * PriorRequestNotComplete, service and network errors, a missing zone, denied access) is `unavailable`:
 * the record may well be fine, and the caller tries again later.
 */
export async function callRoute53<T>(
  options: { operation: string; what: string; zone: string; unavailable: Unavailable },
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    const name = awsErrorName(error);
    if (name === 'InvalidChangeBatch') throw error;
    if (name === 'InvalidInput')
      throw new ValidationError(
        `Route 53 rejected the ${options.operation} of ${options.what}: ${awsErrorMessage(error)}`,
        {
          cause: error,
        },
      );
    throw options.unavailable(
      `Route 53 ${options.operation} of ${options.what} in zone ${options.zone} failed (${name}): ${awsErrorMessage(error)}`,
      error,
    );
  }
}

/** One change batch; true if applied, false if Route 53 rejected it because a record changed meanwhile. */
export async function applyChangeBatch(options: {
  api: Route53Api;
  zone: string;
  name: string;
  changes: Change[];
  comment: string;
  unavailable: Unavailable;
}): Promise<boolean> {
  try {
    await callRoute53(
      { operation: 'change', what: options.name, zone: options.zone, unavailable: options.unavailable },
      () =>
        options.api.changeResourceRecordSets({
          HostedZoneId: options.zone,
          ChangeBatch: { Comment: `gardenless: ${options.comment}`, Changes: options.changes },
        }),
    );
    return true;
  } catch (error) {
    if (awsErrorName(error) === 'InvalidChangeBatch') return false;
    throw error;
  }
}
