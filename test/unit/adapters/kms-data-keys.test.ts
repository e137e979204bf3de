import { describe, expect, it } from 'vitest';
import { KmsDataKeys, type KmsApi } from '../../../adapters/kms/data-keys.js';
import { SecretsUnavailableError } from '../../../core/shootstate/sealed.js';

describe('KmsDataKeys', () => {
  it('passes the key and the context to every call, and base64-encodes the wrapped key', async () => {
    // Prepare
    const calls: { op: string; input: unknown }[] = [];
    const api: KmsApi = {
      generateDataKey: async (input) => {
        calls.push({ op: 'generate', input });
        return { Plaintext: new Uint8Array(32).fill(7), CiphertextBlob: Uint8Array.from([1, 2, 3]) };
      },
      encrypt: async (input) => {
        calls.push({ op: 'encrypt', input });
        return { CiphertextBlob: Uint8Array.from([4, 5]) };
      },
      decrypt: async (input) => {
        calls.push({ op: 'decrypt', input });
        return { Plaintext: new Uint8Array(32).fill(9) };
      },
    };
    const keys = new KmsDataKeys({ keyId: 'alias/k', api });
    const context = { 'gardenless:shoot': 'shoot--a--b', 'gardenless:seed': 's1' };

    // Act
    const generated = await keys.generate(context);
    const wrapped = await keys.wrap(Buffer.alloc(32), context);
    const unwrapped = await keys.unwrap('AQID', context);

    // Assess
    expect(generated.wrapped).toBe('AQID');
    expect(generated.plaintext).toEqual(Buffer.alloc(32, 7));
    expect(wrapped).toBe('BAU=');
    expect(unwrapped).toEqual(Buffer.alloc(32, 9));
    expect(calls.map((c) => c.op)).toEqual(['generate', 'encrypt', 'decrypt']);
    for (const call of calls) expect(call.input).toMatchObject({ KeyId: 'alias/k', EncryptionContext: context });
  });

  it("turns KMS refusing (another seed's copy) into SecretsUnavailable naming the call", async () => {
    const denied = Object.assign(new Error('not authorized to perform kms:Decrypt'), { name: 'AccessDeniedException' });
    const api = { decrypt: async () => Promise.reject(denied) } as unknown as KmsApi;
    const error = await new KmsDataKeys({ keyId: 'k', api }).unwrap('AQID', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SecretsUnavailableError);
    expect((error as Error).message).toBe(
      'KMS Decrypt failed: AccessDeniedException: not authorized to perform kms:Decrypt',
    );
  });
});
