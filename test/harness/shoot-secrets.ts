import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { DynamoShootStateStore } from '../../adapters/dynamodb/shoot-state-store.js';
import { KmsDataKeys, kmsApi } from '../../adapters/kms/data-keys.js';
import type { SeedCommand } from '../../core/commands/index.js';
import { generateShootSecrets } from '../../core/pki/shoot-secrets.js';
import { ShootSecretsKeeper, type SealedSecrets, type ShootSecrets } from '../../core/shootstate/index.js';
import { emulatorCredentials } from '../../local/aws-env.js';
import type { Deployment } from '../../local/deploy.js';

/**
 * The garden's side of shoots' secrets for tests that send seed commands themselves: kept in the
 * deployment's ShootState table and sealed with its KMS key, as the operate and migrate functions keep and
 * seal them, so a command the test sends and one the garden sends carry the same secrets. What a real
 * agent then opens with its own KMS access.
 */
export function testShootSecrets(deployment: Deployment) {
  const aws = { endpoint: deployment.awsEndpoint, region: deployment.region, credentials: emulatorCredentials() };
  const keeper = new ShootSecretsKeeper({
    store: new DynamoShootStateStore({ tableName: deployment.outputs.TableName, client: new DynamoDBClient(aws) }),
    keys: new KmsDataKeys({ keyId: deployment.outputs.ShootSecretsKeyArn!, api: kmsApi(new KMSClient(aws)) }),
    generate: generateShootSecrets,
  });
  return {
    forSeed: (shoot: SeedCommand['shoot'], seed: string): Promise<SealedSecrets> => keeper.forSeed(shoot, seed),
    open: (shoot: SeedCommand['shoot']): Promise<ShootSecrets> => keeper.open(shoot),
  };
}
