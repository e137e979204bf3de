import { createHash } from 'node:crypto';

/**
 * The key-space digest (docs/design.md section 4, "Fidelity"): what a restore compares with the source to
 * show that it holds exactly what the source held at the same revision. It covers every live key with
 * everything a client can read of it: key, value, `create_revision`, `mod_revision`, `version` and
 * `lease`. It is the sum, modulo 2^256, of one SHA-256 per key, so it is a multiset hash: independent of
 * the order keys are visited in, and kept up to date from a watch by subtracting a key's old entry and
 * adding its new one, without a pass over the database. Unlike etcd's `HashKV` it depends on nothing but
 * the live keys: not on compaction, nor on how the history reached them.
 */

export interface KeyEntry {
  readonly key: Uint8Array;
  readonly value: Uint8Array;
  readonly createRevision: number | string | bigint;
  readonly modRevision: number | string | bigint;
  readonly version: number | string | bigint;
  /** etcd's int64 lease ID (0: none), as etcd's clients spell it. */
  readonly lease: number | string | bigint;
}

const MODULUS = 1n << 256n;
const U64 = (n: number | string | bigint) => BigInt.asUintN(64, BigInt(n));

/** One key's contribution: SHA-256 over its length-prefixed key and value and its four numbers. */
export function entryHash(entry: KeyEntry): bigint {
  const numbers = Buffer.alloc(8 * 6);
  numbers.writeBigUInt64BE(BigInt(entry.key.byteLength), 0);
  numbers.writeBigUInt64BE(BigInt(entry.value.byteLength), 8);
  numbers.writeBigUInt64BE(U64(entry.createRevision), 16);
  numbers.writeBigUInt64BE(U64(entry.modRevision), 24);
  numbers.writeBigUInt64BE(U64(entry.version), 32);
  numbers.writeBigUInt64BE(U64(entry.lease), 40);
  const hash = createHash('sha256').update(numbers).update(entry.key).update(entry.value).digest('hex');
  return BigInt(`0x${hash}`);
}

/** 64 lowercase hex digits: how a digest is written into a delta and into error messages. */
export function digestHex(sum: bigint): string {
  return sum.toString(16).padStart(64, '0');
}

export function parseDigest(hex: string): bigint {
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new RangeError(`not a key-space digest: ${JSON.stringify(hex)}`);
  return BigInt(`0x${hex}`);
}

/** A key-space digest being built or kept: `add` a key's entry, `remove` the entry it had. */
export class KeySpaceDigest {
  private sum: bigint;

  constructor(hex?: string) {
    this.sum = hex === undefined ? 0n : parseDigest(hex);
  }

  add(entry: KeyEntry): this {
    this.sum = (this.sum + entryHash(entry)) % MODULUS;
    return this;
  }

  remove(entry: KeyEntry): this {
    this.sum = (this.sum - entryHash(entry) + MODULUS) % MODULUS;
    return this;
  }

  get hex(): string {
    return digestHex(this.sum);
  }
}

/** The digest of an empty key space (an etcd that never took a write, or whose keys are all deleted). */
export const EMPTY_KEY_SPACE_DIGEST = digestHex(0n);
