import { DecryptCommand, EncryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { SecretsUnavailableError, type DataKeys, type KeyContext } from '../../core/shootstate/sealed.js';

/** The KMS calls the data keys use: a narrow seam, so that unit tests need no client. */
export interface KmsApi {
  generateDataKey(input: {
    KeyId: string;
    KeySpec: 'AES_256';
    EncryptionContext: Record<string, string>;
  }): Promise<{ Plaintext?: Uint8Array; CiphertextBlob?: Uint8Array }>;
  encrypt(input: {
    KeyId: string;
    Plaintext: Uint8Array;
    EncryptionContext: Record<string, string>;
  }): Promise<{ CiphertextBlob?: Uint8Array }>;
  decrypt(input: {
    CiphertextBlob: Uint8Array;
    EncryptionContext: Record<string, string>;
    KeyId?: string;
  }): Promise<{ Plaintext?: Uint8Array }>;
}

export function kmsApi(client: KMSClient): KmsApi {
  return {
    generateDataKey: (input) => client.send(new GenerateDataKeyCommand(input)),
    encrypt: (input) => client.send(new EncryptCommand(input)),
    decrypt: (input) => client.send(new DecryptCommand(input)),
  };
}

/**
 * Data keys from KMS, wrapped under one customer-managed key with the encryption context as given. The
 * context is what IAM conditions see (`kms:EncryptionContext:gardenless:seed`): the seed agents' policy
 * lets each unwrap only data keys wrapped under its own seed's name (docs/actors.md). Unwrapping names the
 * key, so that a ciphertext of another key is refused rather than tried.
 */
export class KmsDataKeys implements DataKeys {
  /** `keyId` is needed to make and wrap keys; a reader that only unwraps (a seed agent) may leave it out. */
  constructor(private readonly options: { keyId?: string; api: KmsApi }) {}

  async generate(context: KeyContext): Promise<{ plaintext: Buffer; wrapped: string }> {
    const out = await this.call('GenerateDataKey', () =>
      this.options.api.generateDataKey({ KeyId: this.keyId(), KeySpec: 'AES_256', EncryptionContext: { ...context } }),
    );
    if (!out.Plaintext || !out.CiphertextBlob) throw new SecretsUnavailableError('KMS GenerateDataKey answered no key');
    return { plaintext: Buffer.from(out.Plaintext), wrapped: Buffer.from(out.CiphertextBlob).toString('base64') };
  }

  async wrap(plaintext: Buffer, context: KeyContext): Promise<string> {
    const out = await this.call('Encrypt', () =>
      this.options.api.encrypt({ KeyId: this.keyId(), Plaintext: plaintext, EncryptionContext: { ...context } }),
    );
    if (!out.CiphertextBlob) throw new SecretsUnavailableError('KMS Encrypt answered no ciphertext');
    return Buffer.from(out.CiphertextBlob).toString('base64');
  }

  async unwrap(wrapped: string, context: KeyContext): Promise<Buffer> {
    const out = await this.call('Decrypt', () =>
      this.options.api.decrypt({
        CiphertextBlob: Buffer.from(wrapped, 'base64'),
        EncryptionContext: { ...context },
        ...(this.options.keyId ? { KeyId: this.options.keyId } : {}),
      }),
    );
    if (!out.Plaintext) throw new SecretsUnavailableError('KMS Decrypt answered no plaintext');
    return Buffer.from(out.Plaintext);
  }

  private keyId(): string {
    if (!this.options.keyId) throw new SecretsUnavailableError('no KMS key to make or wrap data keys with');
    return this.options.keyId;
  }

  private async call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      const name = (error as { name?: string }).name ?? 'Error';
      // AccessDenied (another seed's copy), InvalidCiphertext (a wrong context), throttling, KMS down: the
      // message names the call and KMS's error, never the key material.
      throw new SecretsUnavailableError(`KMS ${operation} failed: ${name}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
}
