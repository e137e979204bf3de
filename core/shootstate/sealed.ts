import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { DomainError } from '../errors.js';
import { shootSecretsSchema, type ShootSecrets } from './secrets.js';

/**
 * Envelope encryption of a shoot's secrets: a data key of its own (AES-256-GCM) encrypts them, and a key
 * service (KMS on AWS) wraps the data key under an encryption context that says who may unwrap it. The
 * garden keeps them under the garden's context; each command that needs them carries a copy whose data key
 * is wrapped again under the receiving seed's context, which only that seed's agent may unwrap
 * (docs/actors.md). The shoot named in the context is also the cipher's associated data, so secrets moved
 * to another shoot fail to open even with a data key that unwraps.
 */
/** Secrets that shoots sealed before them lack, which the keeper adds once (docs/design.md section 14). */
export const SECRETS_ADDED_LATER = ['etcdPeerCA'] as const;

export type KeyContext = Readonly<Record<string, string>>;

/** Wraps and unwraps data keys; KMS in production (`adapters/kms`), `LocalDataKeys` in unit tests. */
export interface DataKeys {
  /** A fresh 32-byte data key, in plain and wrapped under `context`. */
  generate(context: KeyContext): Promise<{ plaintext: Buffer; wrapped: string }>;
  wrap(plaintext: Buffer, context: KeyContext): Promise<string>;
  /** Fails (SecretsUnavailableError) when the context differs from the one it was wrapped under. */
  unwrap(wrapped: string, context: KeyContext): Promise<Buffer>;
}

export const sealedSecretsSchema = z
  .object({
    algorithm: z.literal('AES-256-GCM'),
    /** The data key as the key service wrapped it (base64). */
    wrappedKey: z.string().min(1).max(4096),
    /** What the data key was wrapped under; the opener checks it against what it expects. */
    context: z.record(z.string().max(128), z.string().max(256)),
    iv: z.string().regex(/^[A-Za-z0-9+/]{16}$/),
    ciphertext: z.string().min(1).max(65_536),
    tag: z.string().regex(/^[A-Za-z0-9+/]{22}==$/),
    /**
     * The secrets added after the first ones that the ciphertext holds, named in the clear so that the
     * keeper knows without a key service call whether it must add one; absent: none (sealed before them).
     */
    holds: z.array(z.enum(SECRETS_ADDED_LATER)).max(8).optional(),
  })
  .strict();
export type SealedSecrets = z.infer<typeof sealedSecretsSchema>;

/** The secrets could not be sealed or opened: the key service failed or refused, or the document was altered. */
export class SecretsUnavailableError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'SecretsUnavailable', options);
  }
}

/** The context the garden keeps a shoot's secrets under. */
export function gardenContext(technicalID: string): KeyContext {
  return { 'gardenless:shoot': technicalID, 'gardenless:use': 'garden' };
}

/** The context of the copy a seed receives: only that seed's agent may unwrap it. */
export function seedContext(technicalID: string, seed: string): KeyContext {
  return { 'gardenless:shoot': technicalID, 'gardenless:seed': seed };
}

export async function sealSecrets(secrets: ShootSecrets, keys: DataKeys, context: KeyContext): Promise<SealedSecrets> {
  const { plaintext, wrapped } = await keyService(() => keys.generate(context));
  try {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', plaintext, iv);
    cipher.setAAD(shootOf(context));
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(secrets), 'utf8'), cipher.final()]);
    return {
      algorithm: 'AES-256-GCM',
      wrappedKey: wrapped,
      context: { ...context },
      iv: iv.toString('base64'),
      ciphertext: ciphertext.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      ...(secrets.etcdPeerCA ? { holds: ['etcdPeerCA' as const] } : {}),
    };
  } finally {
    plaintext.fill(0);
  }
}

/** Opens sealed secrets that must have been sealed under `expected` (the caller's own idea of who it is). */
export async function openSecrets(sealed: SealedSecrets, keys: DataKeys, expected: KeyContext): Promise<ShootSecrets> {
  assertContext(sealed, expected);
  const key = await keyService(() => keys.unwrap(sealed.wrappedKey, expected));
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(shootOf(expected));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    const json = Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]);
    const parsed = shootSecretsSchema.safeParse(JSON.parse(json.toString('utf8')));
    if (!parsed.success) throw new SecretsUnavailableError("the sealed secrets do not hold a shoot's secrets");
    return parsed.data;
  } catch (error) {
    if (error instanceof SecretsUnavailableError) throw error;
    // GCM's authentication failed: altered, or sealed for another context. Its message says nothing more.
    throw new SecretsUnavailableError('the sealed secrets do not open: altered, or sealed for another shoot or seed', {
      cause: error,
    });
  } finally {
    key.fill(0);
  }
}

/**
 * The same secrets for another reader: the data key unwrapped under `from` and wrapped again under `to`;
 * the ciphertext stays as it is (KMS's ReEncrypt does the same without the data key leaving KMS; the
 * emulator has none, so this unwraps and wraps). Only within one shoot.
 */
export async function resealSecrets(
  sealed: SealedSecrets,
  keys: DataKeys,
  from: KeyContext,
  to: KeyContext,
): Promise<SealedSecrets> {
  assertContext(sealed, from);
  if (!shootOf(from).equals(shootOf(to)))
    throw new SecretsUnavailableError(`secrets of one shoot are not resealed for another (${describe(to)})`);
  const key = await keyService(() => keys.unwrap(sealed.wrappedKey, from));
  try {
    return { ...sealed, wrappedKey: await keyService(() => keys.wrap(key, to)), context: { ...to } };
  } finally {
    key.fill(0);
  }
}

function assertContext(sealed: SealedSecrets, expected: KeyContext): void {
  if (associatedData(sealed.context).equals(associatedData(expected))) return;
  throw new SecretsUnavailableError(
    `the sealed secrets are for ${describe(sealed.context)}, not for ${describe(expected)}`,
  );
}

/** The shoot a context names, as the cipher's associated data. */
function shootOf(context: KeyContext): Buffer {
  return Buffer.from(JSON.stringify({ shoot: context['gardenless:shoot'] ?? '' }));
}

/** The context as bytes: its entries sorted by key, so that the order they were written in does not matter. */
function associatedData(context: KeyContext): Buffer {
  return Buffer.from(JSON.stringify(Object.entries(context).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

function describe(context: KeyContext): string {
  return Object.entries(context)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
}

async function keyService<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof SecretsUnavailableError) throw error;
    throw new SecretsUnavailableError(`the key service failed: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Data keys wrapped with a key held in this process (AES-256-GCM, the context as associated data): for
 * unit tests, and the behaviour KMS has that the code relies on (a wrong context does not unwrap).
 */
export class LocalDataKeys implements DataKeys {
  constructor(private readonly masterKey: Buffer = randomBytes(32)) {}

  async generate(context: KeyContext): Promise<{ plaintext: Buffer; wrapped: string }> {
    const plaintext = randomBytes(32);
    return { plaintext, wrapped: await this.wrap(plaintext, context) };
  }

  async wrap(plaintext: Buffer, context: KeyContext): Promise<string> {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.masterKey, iv);
    cipher.setAAD(associatedData(context));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64');
  }

  async unwrap(wrapped: string, context: KeyContext): Promise<Buffer> {
    const bytes = Buffer.from(wrapped, 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.masterKey, bytes.subarray(0, 12));
      decipher.setAAD(associatedData(context));
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]);
    } catch (error) {
      throw new SecretsUnavailableError('the data key does not unwrap under this context', { cause: error });
    }
  }
}

/** A key service whose every call fails: for fault tests. */
export class FailingDataKeys implements DataKeys {
  constructor(private readonly message = 'key service unavailable (failing key service)') {}
  async generate(): Promise<{ plaintext: Buffer; wrapped: string }> {
    throw new SecretsUnavailableError(this.message);
  }
  async wrap(): Promise<string> {
    throw new SecretsUnavailableError(this.message);
  }
  async unwrap(): Promise<Buffer> {
    throw new SecretsUnavailableError(this.message);
  }
}
