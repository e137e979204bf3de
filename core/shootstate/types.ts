import type { ExtensionKind, NamedResourceReference } from '../extensions/resource.js';
import type { SealedSecrets } from './sealed.js';

export const SHOOT_STATE_API_VERSION = 'core.gardenless.io/v1';

/** Which shoot a ShootState belongs to. */
export interface ShootRef {
  project: string;
  name: string;
  technicalID: string;
}

/** Where a blob too large to keep inline lives: an object in the state bucket, named and verified by its sha256. */
export interface BlobRef {
  /** The bucket, when the store knows it (informational: a store reads from its own bucket). */
  bucket?: string;
  key: string;
  /** Lowercase hex sha256 of the stored bytes (the state's JSON, UTF-8). */
  sha256: string;
  size: number;
}

/** A state as persisted: inline (at most the blob threshold) or a reference to a blob. */
export type StoredState = { inline: unknown } | { ref: BlobRef };

/** One extension's entry: enough to recreate the resource on the destination and restore it. */
export interface ShootStateExtension<S = unknown> {
  kind: ExtensionKind;
  name: string;
  purpose?: string;
  /** The extension's `status.state`; absent for a stateless extension. */
  state?: S;
  resources?: NamedResourceReference[];
}

/**
 * Gardener's `ShootState`: what is not reconstructible from the shoot spec and must follow the control
 * plane to another seed. `S` is the state's form: the JSON value itself (`ShootState`), or as persisted,
 * inline or a blob reference (`PackedShootState`).
 */
export interface ShootStateOf<S> {
  apiVersion: typeof SHOOT_STATE_API_VERSION;
  kind: 'ShootState';
  shoot: ShootRef;
  extensions: ShootStateExtension<S>[];
  /** When the extensions' states were collected, and on which seed. */
  collectedAt: string;
  seed?: string;
  /** `migrate` when collected after a successful migrate (complete), `reconcile` when collected after a reconcile. */
  collectedAfter: 'migrate' | 'reconcile';
  /**
   * The shoot's secrets (cluster CA, client CA, ServiceAccount key, etcd encryption key), sealed under the
   * garden's context: made once at create by the garden, kept by every later save (`secrets.ts`, `sealed.ts`).
   * Seeds never send them back: a ShootState an agent collected has none.
   */
  secrets?: SealedSecrets;
}

export type ShootState = ShootStateOf<unknown>;
export type PackedShootState = ShootStateOf<StoredState>;

/** A ShootState as the store holds it, with the version a conditional save compares against. */
export interface VersionedShootState {
  state: PackedShootState;
  version: number;
}
