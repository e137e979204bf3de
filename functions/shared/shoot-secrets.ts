import { KMSClient } from '@aws-sdk/client-kms';
import { KmsDataKeys, kmsApi } from '../../adapters/kms/data-keys.js';
import { generateShootSecrets } from '../../core/pki/shoot-secrets.js';
import { ShootSecretsKeeper } from '../../core/shootstate/secrets-keeper.js';
import type { ShootStateStore } from '../../core/shootstate/store.js';
import { requireEnv } from './env.js';

/** The shoots' secrets as the garden's functions keep them: in the ShootState, data keys from the stack's KMS key. */
export function shootSecretsKeeper(store: ShootStateStore): ShootSecretsKeeper {
  return new ShootSecretsKeeper({
    store,
    keys: new KmsDataKeys({ keyId: requireEnv('SHOOT_SECRETS_KEY_ID'), api: kmsApi(new KMSClient({})) }),
    generate: generateShootSecrets,
  });
}
