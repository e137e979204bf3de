import { withoutLease } from '../../core/garden/seed-lease.js';
import type { Seed } from '../../core/model/seed.js';
import type { Shoot } from '../../core/model/shoot.js';
import { seedKey, shootKey } from './keys.js';

/**
 * How resources map to items. `rv` is the resourceVersion as a number so that conditions can compare
 * it; a seed's shoot count lives in its own attribute so that placing a shoot can change it atomically
 * without touching (or racing with) the rest of the seed.
 */
export interface SeedItem {
  pk: string;
  sk: string;
  kind: 'Seed';
  id: string;
  rv: number;
  shoots: number;
  /** Present when the seed limits how many shoots it hosts. */
  capacity?: number;
  deleting?: boolean;
  doc: Omit<Seed, 'status'> & { status: Omit<Seed['status'], 'shoots'> };
}

export interface ShootItem {
  pk: string;
  sk: string;
  kind: 'Shoot';
  id: string;
  project: string;
  name: string;
  rv: number;
  seedName?: string;
  doc: Shoot;
}

export function seedToItem(seed: Seed, rv: number): Omit<SeedItem, 'shoots'> {
  // What the lease says is never written into the resource.
  const { shoots: _shoots, ...status } = withoutLease(seed).status;
  const { resourceVersion: _rv, ...metadata } = seed.metadata;
  return {
    ...seedKey(seed.metadata.name),
    kind: 'Seed',
    id: seed.metadata.name,
    rv,
    ...(seed.spec.capacity ? { capacity: seed.spec.capacity.shoots } : {}),
    ...(seed.metadata.deletionTimestamp ? { deleting: true } : {}),
    doc: { ...seed, metadata: metadata as Seed['metadata'], status },
  };
}

export function itemToSeed(item: object): Seed {
  const it = item as unknown as SeedItem;
  return {
    ...it.doc,
    metadata: { ...it.doc.metadata, resourceVersion: String(it.rv) },
    status: { ...it.doc.status, shoots: Number(it.shoots ?? 0) },
  };
}

export function shootToItem(shoot: Shoot, rv: number): ShootItem {
  const { resourceVersion: _rv, ...metadata } = shoot.metadata;
  const { project, name } = shoot.metadata;
  return {
    ...shootKey(project, name),
    kind: 'Shoot',
    id: `${project}/${name}`,
    project,
    name,
    rv,
    ...(shoot.status.seedName ? { seedName: shoot.status.seedName } : {}),
    doc: { ...shoot, metadata: metadata as Shoot['metadata'] },
  };
}

export function itemToShoot(item: object): Shoot {
  const it = item as unknown as ShootItem;
  return { ...it.doc, metadata: { ...it.doc.metadata, resourceVersion: String(it.rv) } };
}
