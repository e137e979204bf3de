import type { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as route53 from 'aws-cdk-lib/aws-route53';

/** The deployment's API domains: `api.<shoot>.<project>.<externalDomain>` in a zone of their own. */
export interface ApiDomain {
  zone: route53.IHostedZone;
  externalDomain: string;
  ttl: Duration;
}

/** What a function that reads or writes API records needs to know (functions/shared/api-records.ts). */
export function apiDomainEnvironment(api: ApiDomain): Record<string, string> {
  return {
    API_HOSTED_ZONE_ID: api.zone.hostedZoneId,
    EXTERNAL_DOMAIN: api.externalDomain,
    API_RECORD_TTL_SECONDS: String(api.ttl.toSeconds()),
  };
}

/** Reading and changing record sets in the external domain's zone only. */
export function grantApiRecords(role: iam.IRole, api: ApiDomain, options: { write: boolean }): void {
  const actions = options.write
    ? ['route53:ListResourceRecordSets', 'route53:ChangeResourceRecordSets']
    : ['route53:ListResourceRecordSets'];
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: [api.zone.hostedZoneArn] }));
}
