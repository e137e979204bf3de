import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { StoredWatchdogRecord, WatchdogRecord, WatchdogStateStore } from '../../core/dwd/watchdog-store.js';
import { ConflictError } from '../../core/errors.js';

/** Watchdog state per shoot in the garden table: `pk = WATCHDOG#<project>/<name>`, versioned. */
export class DynamoWatchdogStateStore implements WatchdogStateStore {
  private readonly doc: DynamoDBDocumentClient;
  constructor(private readonly options: { tableName: string; client?: DynamoDBClient }) {
    this.doc = DynamoDBDocumentClient.from(options.client ?? new DynamoDBClient({}), {
      marshallOptions: { removeUndefinedValues: true },
    });
  }

  async load(shootKey: string): Promise<StoredWatchdogRecord | undefined> {
    const res = await this.doc.send(
      new GetCommand({ TableName: this.options.tableName, Key: key(shootKey), ConsistentRead: true }),
    );
    if (!res.Item) return undefined;
    return { record: res.Item.record as WatchdogRecord, version: Number(res.Item.v) };
  }

  async save(shootKey: string, record: WatchdogRecord, expectedVersion: number | undefined): Promise<number> {
    const version = (expectedVersion ?? 0) + 1;
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.options.tableName,
          Item: { ...key(shootKey), record, v: version },
          ConditionExpression: expectedVersion === undefined ? 'attribute_not_exists(pk)' : 'v = :expected',
          ...(expectedVersion === undefined ? {} : { ExpressionAttributeValues: { ':expected': expectedVersion } }),
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        throw new ConflictError(`watchdog state of ${shootKey} changed since version ${String(expectedVersion)}`, {
          cause: error,
        });
      }
      throw error;
    }
    return version;
  }
}

function key(shootKey: string) {
  return { pk: `WATCHDOG#${shootKey}`, sk: 'WATCHDOG' };
}
