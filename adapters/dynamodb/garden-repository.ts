import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall, type NativeAttributeValue } from '@aws-sdk/util-dynamodb';
import { ConflictError, NotFoundError } from '../../core/errors.js';
import { hostsControlPlanes, SeedUnavailableError } from '../../core/garden/errors.js';
import type { Page, PageRequest } from '../../core/garden/page.js';
import type { GardenRepository } from '../../core/garden/repository.js';
import { systemClock, type Clock } from '../../core/garden/context.js';
import { seedWithLease, withoutReport, type SeedLease } from '../../core/garden/seed-lease.js';
import type { Seed } from '../../core/model/seed.js';
import type { Shoot } from '../../core/model/shoot.js';
import { itemToSeed, itemToShoot, seedToItem, shootToItem, type ShootItem } from './codec.js';
import { TABLE_INDEXES, seedKey, seedLeaseKey, seedReportKey, shootKey } from './keys.js';
import { joinLease, leaseItems, reportComplete } from './seed-lease-items.js';
import { queryPartition } from './partition.js';
import {
  decodePageToken,
  encodePageToken,
  listIdentity,
  seedShootsListIdentity,
} from '../../core/garden/page-token.js';
import { isName } from '../../core/model/names.js';

/** How often a lease whose report changed between its reads is read again (`leases`). */
const LEASE_READ_ATTEMPTS = 5;

export interface DynamoGardenRepositoryOptions {
  tableName: string;
  client?: DynamoDBClient;
  /** Seeds are read with their lease as of this clock's now. */
  clock?: Clock;
  /** Transactions that collide with another on the same seed are retried this often, with jitter. */
  transactionRetries?: number;
}

export class DynamoGardenRepository implements GardenRepository {
  private readonly doc: DynamoDBDocumentClient;
  private readonly table: string;
  private readonly txRetries: number;
  private readonly clock: Clock;

  constructor(options: DynamoGardenRepositoryOptions) {
    this.doc = DynamoDBDocumentClient.from(options.client ?? new DynamoDBClient({}), {
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    });
    this.table = options.tableName;
    this.txRetries = options.transactionRetries ?? 8;
    this.clock = options.clock ?? systemClock;
  }

  async getSeed(name: string, options: { controlPlanes?: boolean } = {}): Promise<Seed | undefined> {
    if (options.controlPlanes === false) {
      const items = await this.batchGet([seedKey(name), seedLeaseKey(name)]);
      const seed = items.find((i) => i.sk === seedKey(name).sk);
      if (!seed) return undefined;
      const lease = joinLease(
        items.find((i) => i.sk === seedLeaseKey(name).sk),
        [],
        { controlPlanes: false },
      );
      return withoutReport(seedWithLease(itemToSeed(seed), lease, this.clock.now()));
    }
    // The seed, its lease and its report share a partition: one consistent query (a report over 1 MB
    // takes more than one page) reads them all, unless it fell between two heartbeats.
    const items = await queryPartition(this.doc, this.table, seedKey(name).pk);
    const seed = items.find((i) => i.sk === seedKey(name).sk);
    if (!seed) return undefined;
    const leaseItem = items.find((i) => i.sk === seedLeaseKey(name).sk);
    const lease = reportComplete(leaseItem, items)
      ? joinLease(leaseItem, items, { controlPlanes: true })
      : (await this.leases([name], true)).get(name);
    return seedWithLease(itemToSeed(seed), lease, this.clock.now());
  }

  async listSeeds(page: PageRequest, options: { leases?: boolean; controlPlanes?: boolean } = {}): Promise<Page<Seed>> {
    const seeds = await this.query({
      index: TABLE_INDEXES.kind,
      partition: 'Seed',
      page,
      map: itemToSeed,
      list: listIdentity('seeds'),
      startKey: seedStartKey,
    });
    // The stored resource carries no lease fields: without the lease it is what readers see of a silent seed.
    if (options.leases === false) return seeds;
    const controlPlanes = options.controlPlanes !== false;
    const leases = await this.leases(
      seeds.items.map((s) => s.metadata.name),
      controlPlanes,
    );
    const now = this.clock.now();
    return {
      ...seeds,
      items: seeds.items.map((s) => {
        const seed = seedWithLease(s, leases.get(s.metadata.name), now);
        return controlPlanes ? seed : withoutReport(seed);
      }),
    };
  }

  /**
   * Renews the lease. The report of control planes is written only when it changed: the lease alone first,
   * on the condition that the stored report is this one (its digest); if it is not, lease and report
   * together. Either way one transaction, conditional on the seed's identity.
   */
  async renewLease(lease: SeedLease): Promise<void> {
    const items = leaseItems(lease);
    const identity = {
      ConditionCheck: {
        TableName: this.table,
        Key: seedKey(lease.seed),
        ConditionExpression: 'attribute_exists(pk) AND #doc.#status.#identity = :identity',
        ExpressionAttributeNames: { '#doc': 'doc', '#status': 'status', '#identity': 'identity' },
        ExpressionAttributeValues: { ':identity': lease.holderIdentity },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
      },
    };
    const identityError = (old: Record<string, unknown> | undefined, cause: unknown) => {
      if (!old) return new NotFoundError(`seed "${lease.seed}" not found`, { cause });
      const current = itemToSeed(old).status.identity;
      return new ConflictError(`seed "${lease.seed}" has identity ${current}, not ${lease.holderIdentity}`, {
        code: 'IdentityMismatch',
        field: 'identity',
        cause,
      });
    };
    try {
      await this.transact(
        [
          identity,
          {
            Put: {
              TableName: this.table,
              Item: items.lease,
              ConditionExpression: 'reportDigest = :digest',
              ExpressionAttributeValues: { ':digest': items.digest },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
        ],
        (index, old, cause) =>
          index === 0 ? identityError(old, cause) : new ReportChanged(Number(old?.reportChunks ?? 0)),
      );
    } catch (error) {
      if (!(error instanceof ReportChanged)) throw error;
      // A shorter report than the stored one: its surplus chunks go in the same write.
      const surplus = Array.from({ length: Math.max(0, error.storedChunks - items.report.length) }, (_, k) => ({
        Delete: { TableName: this.table, Key: seedReportKey(lease.seed, items.report.length + k) },
      }));
      await this.transact(
        [
          identity,
          { Put: { TableName: this.table, Item: items.lease } },
          ...items.report.map((chunk) => ({ Put: { TableName: this.table, Item: chunk } })),
          ...surplus,
        ],
        (_index, old, cause) => identityError(old, cause),
      );
    }
  }

  /**
   * The leases of these seeds (with their reports' chunks when `controlPlanes`), consistent reads in
   * batches. A seed whose chunks are not all of the report its lease names (a heartbeat wrote between the
   * two reads: `reportComplete`) is read again, a few times with a pause; a report that changes on every
   * read is an error, never a seed with planes missing.
   */
  private async leases(names: readonly string[], controlPlanes: boolean): Promise<Map<string, SeedLease>> {
    const out = new Map<string, SeedLease>();
    let pending = names;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= LEASE_READ_ATTEMPTS)
        throw new Error(`the reports of seeds ${pending.join(', ')} changed on each of ${attempt} reads`);
      if (attempt > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
      const leaseItems = await this.batchGet(pending.map(seedLeaseKey));
      const chunkKeys = controlPlanes
        ? leaseItems.flatMap((l) =>
            Array.from({ length: Number(l.reportChunks ?? 0) }, (_, k) => seedReportKey(seedNameOf(l), k)),
          )
        : [];
      const chunks = new Map<string, Record<string, unknown>[]>();
      for (const chunk of await this.batchGet(chunkKeys)) {
        const seed = seedNameOf(chunk);
        chunks.set(seed, [...(chunks.get(seed) ?? []), chunk]);
      }
      const again: string[] = [];
      for (const item of leaseItems) {
        const seedChunks = chunks.get(seedNameOf(item)) ?? [];
        if (controlPlanes && !reportComplete(item, seedChunks)) {
          again.push(seedNameOf(item));
          continue;
        }
        const lease = joinLease(item, seedChunks, { controlPlanes });
        if (lease) out.set(lease.seed, lease);
      }
      pending = again;
    }
    return out;
  }

  /** Items by key, consistent, in batches of 100 (BatchGetItem's limit), unprocessed keys retried with backoff. */
  private async batchGet(allKeys: readonly Record<string, string>[]): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    for (let i = 0; i < allKeys.length; i += 100) {
      let keys: Record<string, unknown>[] | undefined = allKeys.slice(i, i + 100);
      for (let attempt = 0; keys && keys.length > 0; attempt++) {
        const res: BatchGetCommandOutput = await this.doc.send(
          new BatchGetCommand({ RequestItems: { [this.table]: { Keys: keys, ConsistentRead: true } } }),
        );
        out.push(...(res.Responses?.[this.table] ?? []));
        keys = res.UnprocessedKeys?.[this.table]?.Keys;
        if (keys?.length) await new Promise((r) => setTimeout(r, Math.min(1_000, 25 * 2 ** attempt)));
      }
    }
    return out;
  }

  async createSeed(seed: Seed): Promise<Seed> {
    const item = { ...seedToItem(seed, 1), shoots: 0 };
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: item,
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        throw new ConflictError(`seed "${seed.metadata.name}" already exists`, {
          code: 'AlreadyExists',
          cause: error,
          current: error.Item ? itemToSeed(unmarshallLoose(error.Item)) : undefined,
        });
      }
      throw error;
    }
    return itemToSeed(item);
  }

  async updateSeed(seed: Seed, expectedVersion: string): Promise<Seed> {
    const item = seedToItem(seed, Number(expectedVersion) + 1);
    // capacity and deleting are what a placement's condition reads, so they follow the spec and metadata.
    const set = ['doc = :doc', 'rv = :next'];
    const remove: string[] = [];
    if (item.capacity === undefined) remove.push('#capacity');
    else set.push('#capacity = :capacity');
    if (item.deleting) set.push('deleting = :deleting');
    else remove.push('deleting');
    try {
      const res = await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: seedKey(seed.metadata.name),
          UpdateExpression: `SET ${set.join(', ')} REMOVE ${remove.join(', ')}`,
          ExpressionAttributeNames: { '#capacity': 'capacity' },
          ConditionExpression: 'rv = :expected',
          ExpressionAttributeValues: {
            ':doc': item.doc,
            ':next': item.rv,
            ':expected': Number(expectedVersion),
            ...(item.capacity === undefined ? {} : { ':capacity': item.capacity }),
            ...(item.deleting ? { ':deleting': true } : {}),
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return itemToSeed(res.Attributes ?? {});
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException)
        throw versionConflict('seed', seed.metadata.name, expectedVersion, error);
      throw error;
    }
  }

  async deleteSeed(name: string, expectedVersion?: string): Promise<void> {
    // The report's chunks go with the lease; how many there are is in the lease.
    const lease = await this.batchGet([seedLeaseKey(name)]);
    const chunks = Number(lease[0]?.reportChunks ?? 0);
    await this.transact(
      [
        {
          Delete: {
            TableName: this.table,
            Key: seedKey(name),
            ConditionExpression: `attribute_exists(pk) AND shoots = :zero${expectedVersion ? ' AND rv = :expected' : ''}`,
            ExpressionAttributeValues: {
              ':zero': 0,
              ...(expectedVersion ? { ':expected': Number(expectedVersion) } : {}),
            },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        {
          // The agent's last report must list no control plane: they would run on with nobody to move them.
          Delete: {
            TableName: this.table,
            Key: seedLeaseKey(name),
            ConditionExpression: 'attribute_not_exists(pk) OR controlPlaneCount = :zero',
            ExpressionAttributeValues: { ':zero': 0 },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        ...Array.from({ length: chunks }, (_, k) => ({
          Delete: { TableName: this.table, Key: seedReportKey(name, k) },
        })),
      ],
      (index, old, cause) => {
        if (index === 1) return hostsControlPlanes(name, Number(old?.controlPlaneCount ?? 0));
        const seed = old ? itemToSeed(old) : undefined;
        if (!seed) return new NotFoundError(`seed "${name}" not found`, { cause });
        if (seed.status.shoots > 0) {
          return new ConflictError(
            `seed "${name}" hosts ${seed.status.shoots} shoot(s); migrate or delete them before deleting the seed`,
            { code: 'SeedHostsShoots', cause, current: seed },
          );
        }
        return new ConflictError(
          `seed "${name}" has been modified since resourceVersion ${expectedVersion ?? ''}; read it again and retry`,
          { field: 'metadata.resourceVersion', cause, current: seed },
        );
      },
    );
  }

  async getShoot(project: string, name: string): Promise<Shoot | undefined> {
    const res = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: shootKey(project, name), ConsistentRead: true }),
    );
    return res.Item ? itemToShoot(res.Item) : undefined;
  }

  async listShoots(project: string, page: PageRequest): Promise<Page<Shoot>> {
    return this.query({
      index: TABLE_INDEXES.project,
      partition: project,
      page,
      map: itemToShoot,
      list: listIdentity('shoots', project),
      startKey: (name) => (isName(name) ? { ...shootKey(project, name), project, name } : undefined),
    });
  }

  async listAllShoots(page: PageRequest): Promise<Page<Shoot>> {
    return this.query({
      index: TABLE_INDEXES.kind,
      partition: 'Shoot',
      page,
      map: itemToShoot,
      list: listIdentity('shoots'),
      startKey: shootIdStartKey,
    });
  }

  async listShootsOnSeed(seedName: string, page: PageRequest): Promise<Page<Shoot>> {
    return this.query({
      index: TABLE_INDEXES.seed,
      partition: seedName,
      page,
      map: itemToShoot,
      list: seedShootsListIdentity(seedName),
      startKey: (id) => {
        const key = shootIdStartKey(id);
        return key ? { pk: key.pk!, sk: key.sk!, seedName, id } : undefined;
      },
    });
  }

  async createShoot(shoot: Shoot): Promise<Shoot> {
    const item = shootToItem(shoot, 1);
    const putShoot = { TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(pk)' };
    const seedName = shoot.status.seedName;
    if (!seedName) {
      try {
        await this.doc.send(new PutCommand({ ...putShoot, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }));
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) throw alreadyExists(shoot, error);
        throw error;
      }
      return itemToShoot(item);
    }
    await this.transact(
      [{ Put: { ...putShoot, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } }, this.countOnSeed(seedName)],
      (index, old, cause) => {
        if (index === 0) return alreadyExists(shoot, cause);
        return seedUnavailable(seedName, old);
      },
    );
    return itemToShoot(item);
  }

  async updateShoot(shoot: Shoot, expectedVersion: string): Promise<Shoot> {
    const item = shootToItem(shoot, Number(expectedVersion) + 1);
    try {
      const res = await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: shootKey(shoot.metadata.project, shoot.metadata.name),
          UpdateExpression: 'SET doc = :doc, rv = :next',
          // Placement is not an update's business: the stored seed must be the one the caller saw.
          ConditionExpression: `rv = :expected AND ${item.seedName ? 'seedName = :seed' : 'attribute_not_exists(seedName)'}`,
          ExpressionAttributeValues: {
            ':doc': item.doc,
            ':next': item.rv,
            ':expected': Number(expectedVersion),
            ...(item.seedName ? { ':seed': item.seedName } : {}),
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return itemToShoot(res.Attributes ?? {});
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException)
        throw versionConflict('shoot', item.id, expectedVersion, error);
      throw error;
    }
  }

  async moveShoot(
    shoot: Shoot,
    options: { fromSeed: string; toSeed: string; expectedVersion: string },
  ): Promise<Shoot> {
    const item = shootToItem(shoot, Number(options.expectedVersion) + 1);
    const id = item.id;
    await this.transact(
      [
        {
          Put: {
            TableName: this.table,
            Item: item,
            ConditionExpression: 'rv = :expected AND seedName = :from',
            ExpressionAttributeValues: { ':expected': Number(options.expectedVersion), ':from': options.fromSeed },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        {
          Update: {
            TableName: this.table,
            Key: seedKey(options.fromSeed),
            UpdateExpression: 'SET shoots = shoots - :one',
            ConditionExpression: 'attribute_exists(pk) AND shoots > :zero',
            ExpressionAttributeValues: { ':one': 1, ':zero': 0 },
          },
        },
        this.countOnSeed(options.toSeed),
      ],
      (index, old, cause) => {
        if (index === 0) return versionConflict('shoot', id, options.expectedVersion, cause);
        if (index === 1)
          return new ConflictError(
            `seed "${options.fromSeed}" does not count shoot "${id}"; the garden state is inconsistent`,
            { code: 'Inconsistent', cause },
          );
        return seedUnavailable(options.toSeed, old);
      },
    );
    return itemToShoot(item);
  }

  async placeShoot(shoot: Shoot, options: { toSeed: string; expectedVersion: string }): Promise<Shoot> {
    const item = shootToItem(shoot, Number(options.expectedVersion) + 1);
    const id = item.id;
    await this.transact(
      [
        {
          Put: {
            TableName: this.table,
            Item: item,
            ConditionExpression: 'rv = :expected AND attribute_not_exists(seedName)',
            ExpressionAttributeValues: { ':expected': Number(options.expectedVersion) },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        this.countOnSeed(options.toSeed),
      ],
      (index, old, cause) =>
        index === 0
          ? versionConflict('shoot', id, options.expectedVersion, cause)
          : seedUnavailable(options.toSeed, old),
    );
    return itemToShoot(item);
  }

  async deleteShoot(project: string, name: string, expectedVersion?: string): Promise<void> {
    const current = await this.getShoot(project, name);
    if (!current) throw new NotFoundError(`shoot "${project}/${name}" not found`);
    const version = current.metadata.resourceVersion;
    if (expectedVersion !== undefined && expectedVersion !== version) {
      throw versionConflict('shoot', `${project}/${name}`, expectedVersion);
    }
    const deleteShoot = {
      TableName: this.table,
      Key: shootKey(project, name),
      // Conditional on the version read, so that the seed released below is the one the shoot is on.
      ConditionExpression: 'rv = :rv',
      ExpressionAttributeValues: { ':rv': Number(version) },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
    };
    const seedName = current.status.seedName;
    if (!seedName) {
      try {
        await this.doc.send(new DeleteCommand(deleteShoot));
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException)
          throw versionConflict('shoot', `${project}/${name}`, version, error);
        throw error;
      }
      return;
    }
    await this.transact(
      [
        { Delete: deleteShoot },
        {
          Update: {
            TableName: this.table,
            Key: seedKey(seedName),
            UpdateExpression: 'SET shoots = shoots - :one',
            ConditionExpression: 'attribute_exists(pk) AND shoots > :zero',
            ExpressionAttributeValues: { ':one': 1, ':zero': 0 },
          },
        },
      ],
      (index, _old, cause) =>
        index === 0
          ? versionConflict('shoot', `${project}/${name}`, version, cause)
          : new ConflictError(
              `seed "${seedName}" does not count shoot "${project}/${name}"; the garden state is inconsistent`,
              { code: 'Inconsistent', cause },
            ),
    );
  }

  /** Counts a shoot on a seed, conditional on the seed existing, not being deleted and having room. */
  private countOnSeed(seedName: string) {
    return {
      Update: {
        TableName: this.table,
        Key: seedKey(seedName),
        UpdateExpression: 'SET shoots = shoots + :one',
        ConditionExpression:
          'attribute_exists(pk) AND attribute_not_exists(deleting) AND (attribute_not_exists(#capacity) OR shoots < #capacity)',
        ExpressionAttributeNames: { '#capacity': 'capacity' },
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
      },
    };
  }

  /**
   * One page of an index partition. The `continue` token carries only its list's identity and the sort
   * key of the last item; the start key is rebuilt from it, so a token of another list or a forged one
   * is a 400 before DynamoDB sees it.
   */
  private async query<T>(options: {
    index: { name: string; partitionKey: string; sortKey: string };
    partition: string;
    page: PageRequest;
    map: (item: Record<string, unknown>) => T;
    list: string;
    startKey: (after: string) => Record<string, string> | undefined;
  }): Promise<Page<T>> {
    const after = decodePageToken(options.page.continue, options.list, (a) => options.startKey(a) !== undefined);
    const res = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: options.index.name,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': options.index.partitionKey },
        ExpressionAttributeValues: { ':pk': options.partition },
        Limit: options.page.limit,
        ExclusiveStartKey: after === undefined ? undefined : options.startKey(after),
      }),
    );
    const last = res.LastEvaluatedKey?.[options.index.sortKey];
    const token = typeof last === 'string' ? encodePageToken({ list: options.list, after: last }) : undefined;
    return { items: (res.Items ?? []).map(options.map), ...(token ? { continue: token } : {}) };
  }

  /**
   * Runs a transaction; a condition failure becomes the domain error `onFailed` builds for the item
   * that failed, and a collision with a concurrent transaction is retried with jittered backoff.
   */
  private async transact(
    items: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>,
    onFailed: (index: number, old: Record<string, unknown> | undefined, cause: unknown) => Error,
  ): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.doc.send(new TransactWriteCommand({ TransactItems: items }));
        return;
      } catch (error) {
        if (!(error instanceof TransactionCanceledException)) throw error;
        const reasons = error.CancellationReasons ?? [];
        const failed = reasons.findIndex((r) => r.Code === 'ConditionalCheckFailed');
        if (failed >= 0) {
          const old = reasons[failed]?.Item;
          throw onFailed(failed, old ? unmarshallLoose(old) : undefined, error);
        }
        const collided = reasons.some((r) => r.Code === 'TransactionConflict');
        if (!collided || attempt >= this.txRetries) throw error;
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(1_000, 25 * 2 ** attempt)));
      }
    }
  }
}

/** The seed a lease or report item belongs to, from its partition key. */
function seedNameOf(item: Record<string, unknown>): string {
  return String(item.pk).slice('SEED#'.length);
}

/** The stored report is not the one a heartbeat carries: lease and report are written together. */
class ReportChanged extends Error {
  constructor(readonly storedChunks: number) {
    super('the report changed');
  }
}

function seedStartKey(name: string): Record<string, string> | undefined {
  return isName(name) ? { ...seedKey(name), kind: 'Seed', id: name } : undefined;
}

function shootIdStartKey(id: string): Record<string, string> | undefined {
  const [project, name, ...rest] = id.split('/');
  if (rest.length > 0 || !isName(project) || !isName(name)) return undefined;
  return { ...shootKey(project, name), kind: 'Shoot', id };
}

/** Why `countOnSeed` failed, from the seed item as it was. */
function seedUnavailable(seedName: string, old: Record<string, unknown> | undefined): SeedUnavailableError {
  if (!old) return new SeedUnavailableError(`seed "${seedName}" does not exist`, seedName, 'NotFound');
  if (old.deleting) return new SeedUnavailableError(`seed "${seedName}" is being deleted`, seedName, 'Deleting');
  return new SeedUnavailableError(
    `seed "${seedName}" is full: it hosts ${String(old.shoots)} of ${String(old.capacity)} shoots`,
    seedName,
    'Full',
  );
}

function alreadyExists(shoot: Shoot, cause: unknown): ConflictError {
  return new ConflictError(`shoot "${shoot.metadata.project}/${shoot.metadata.name}" already exists`, {
    code: 'AlreadyExists',
    cause,
  });
}

function versionConflict(kind: string, name: string, expected: string, cause?: unknown): Error {
  const old = cause instanceof ConditionalCheckFailedException ? cause.Item : undefined;
  if (cause instanceof ConditionalCheckFailedException && !old)
    return new NotFoundError(`${kind} "${name}" not found`, { cause });
  return new ConflictError(
    `${kind} "${name}" has been modified since resourceVersion ${expected}; read it again and retry`,
    {
      field: 'metadata.resourceVersion',
      cause,
      current: old ? decodeResource(unmarshallLoose(old)) : undefined,
    },
  );
}

function decodeResource(item: Record<string, NativeAttributeValue>): Seed | Shoot {
  return item.kind === 'Seed' ? itemToSeed(item) : itemToShoot(item);
}

// Items carried by condition failures arrive in the low-level attribute-value form.
function unmarshallLoose(item: Record<string, unknown>): Record<string, NativeAttributeValue> {
  return unmarshall(item as Parameters<typeof unmarshall>[0]);
}

export type { ShootItem };
