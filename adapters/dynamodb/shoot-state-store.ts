import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import {
  assertPackedFits,
  conflict,
  type PackedShootState,
  type SaveShootStateOptions,
  type ShootStateKey,
  type ShootStateStore,
  type VersionedShootState,
} from '../../core/shootstate/index.js';
import { shootStateKey } from './keys.js';

/**
 * A ShootState item in the garden table. The document is kept as a JSON string: extension state is
 * arbitrary JSON, and DynamoDB maps stop at 32 levels of nesting and count every attribute name. The
 * item carries no `kind`/`id`/`project`/`name` attributes, so it stays out of the table's indexes.
 */
interface ShootStateItem {
  pk: string;
  sk: string;
  rv: number;
  doc: string;
  size: number;
  updatedAt: string;
}

export interface DynamoShootStateStoreOptions {
  tableName: string;
  client?: DynamoDBClient;
  now?: () => Date;
}

export class DynamoShootStateStore implements ShootStateStore {
  private readonly doc: DynamoDBDocumentClient;
  private readonly table: string;
  private readonly now: () => Date;

  constructor(options: DynamoShootStateStoreOptions) {
    this.doc = DynamoDBDocumentClient.from(options.client ?? new DynamoDBClient({}), {
      marshallOptions: { removeUndefinedValues: true },
    });
    this.table = options.tableName;
    this.now = options.now ?? (() => new Date());
  }

  async load(key: ShootStateKey): Promise<VersionedShootState | undefined> {
    const res = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: shootStateKey(key.project, key.name), ConsistentRead: true }),
    );
    if (!res.Item) return undefined;
    const item = res.Item as ShootStateItem;
    return { state: JSON.parse(item.doc) as PackedShootState, version: Number(item.rv) };
  }

  async save(options: SaveShootStateOptions): Promise<number> {
    assertPackedFits(options.state);
    const doc = JSON.stringify(options.state);
    const values = { ':doc': doc, ':size': Buffer.byteLength(doc), ':at': this.now().toISOString() };
    const key = shootStateKey(options.project, options.name);
    try {
      if (options.expectedVersion === 0) {
        const item: ShootStateItem = { ...key, rv: 1, doc, size: values[':size'], updatedAt: values[':at'] };
        await this.doc.send(
          new PutCommand({
            TableName: this.table,
            Item: item,
            ConditionExpression: 'attribute_not_exists(pk)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return 1;
      }
      const conditional = options.expectedVersion !== undefined;
      const res = await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key,
          UpdateExpression: 'SET doc = :doc, #size = :size, updatedAt = :at, rv = if_not_exists(rv, :zero) + :one',
          ...(conditional ? { ConditionExpression: 'rv = :expected' } : {}),
          ExpressionAttributeNames: { '#size': 'size' },
          ExpressionAttributeValues: {
            ...values,
            ':zero': 0,
            ':one': 1,
            ...(conditional ? { ':expected': options.expectedVersion } : {}),
          },
          ReturnValues: 'UPDATED_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return Number(res.Attributes?.rv);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException)
        throw conflict(options, options.expectedVersion ?? 0, currentVersion(error), error);
      throw error;
    }
  }

  async delete(options: ShootStateKey & { expectedVersion?: number }): Promise<void> {
    const expected = options.expectedVersion;
    try {
      await this.doc.send(
        new DeleteCommand({
          TableName: this.table,
          Key: shootStateKey(options.project, options.name),
          ...(expected === undefined
            ? {}
            : expected === 0
              ? { ConditionExpression: 'attribute_not_exists(pk)' }
              : { ConditionExpression: 'rv = :expected', ExpressionAttributeValues: { ':expected': expected } }),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException)
        throw conflict(options, expected ?? 0, currentVersion(error), error);
      throw error;
    }
  }
}

/** The stored version a failed condition reports (ALL_OLD, in the low-level attribute-value form). */
function currentVersion(error: ConditionalCheckFailedException): number | undefined {
  if (!error.Item) return undefined;
  const old = unmarshall(error.Item as Parameters<typeof unmarshall>[0]) as Partial<ShootStateItem>;
  return old.rv === undefined ? undefined : Number(old.rv);
}
