import type * as kms from 'aws-cdk-lib/aws-kms';
import type { GardenFunction } from './garden-function.js';

/**
 * The garden functions that seal, open or reseal shoots' secrets (docs/design.md section 14): the key's
 * ARN in their environment (functions/shared/shoot-secrets.ts) and the right to generate, wrap and unwrap
 * data keys with it. Seed agents get only Decrypt, under their own seed's context (cdk/actors.ts).
 */
export function grantShootSecrets(fn: GardenFunction, key: kms.IKey): void {
  fn.function.addEnvironment('SHOOT_SECRETS_KEY_ID', key.keyArn);
  key.grant(fn.role, 'kms:GenerateDataKey', 'kms:Encrypt', 'kms:Decrypt');
}
