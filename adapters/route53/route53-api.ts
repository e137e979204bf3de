import {
  ChangeResourceRecordSetsCommand,
  ListResourceRecordSetsCommand,
  Route53Client,
  type ChangeResourceRecordSetsCommandInput,
  type ChangeResourceRecordSetsCommandOutput,
  type ListResourceRecordSetsCommandInput,
  type ListResourceRecordSetsCommandOutput,
} from '@aws-sdk/client-route-53';

/** Every Route 53 call the owner and API records make; the IAM policy follows from it. */
export interface Route53Api {
  changeResourceRecordSets(input: ChangeResourceRecordSetsCommandInput): Promise<ChangeResourceRecordSetsCommandOutput>;
  listResourceRecordSets(input: ListResourceRecordSetsCommandInput): Promise<ListResourceRecordSetsCommandOutput>;
}

export function route53Api(client: Route53Client): Route53Api {
  return {
    changeResourceRecordSets: (input) => client.send(new ChangeResourceRecordSetsCommand(input)),
    listResourceRecordSets: (input) => client.send(new ListResourceRecordSetsCommand(input)),
  };
}

/** A record name as we compare it: Route 53 returns names with a trailing dot and escapes some characters as \NNN octal. */
export function normalizeRecordName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '').replace(/\\(\d{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** The AWS error's name (the SDK's `name`, or a `Code` from older shapes). */
export function errorName(error: unknown): string {
  const e = error as { name?: unknown; Code?: unknown } | undefined;
  if (typeof e?.Code === 'string') return e.Code;
  return typeof e?.name === 'string' ? e.name : 'Error';
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
