import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
} from '@aws-sdk/lib-dynamodb';
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

  /**
   * Eventually consistent, as `loadMany`: a stale state cannot be acted on, since every save is conditional
   * on the version read (docs/design.md section 8), and a consistent read costs twice the read units of
   * the largest share of a watchdog round's reads.
   */
  async load(shootKey: string): Promise<StoredWatchdogRecord | undefined> {
    const res = await this.doc.send(new GetCommand({ TableName: this.options.tableName, Key: key(shootKey) }));
    if (!res.Item) return undefined;
    return { record: res.Item.record as WatchdogRecord, version: Number(res.Item.v) };
  }

  /** In batches of 100 (BatchGetItem's limit), eventually consistent like `load`, unprocessed keys retried with backoff. */
  async loadMany(shootKeys: readonly string[]): Promise<Map<string, StoredWatchdogRecord>> {
    const out = new Map<string, StoredWatchdogRecord>();
    const table = this.options.tableName;
    for (let i = 0; i < shootKeys.length; i += 100) {
      let keys: Record<string, unknown>[] | undefined = shootKeys.slice(i, i + 100).map(key);
      for (let attempt = 0; keys && keys.length > 0; attempt++) {
        const res: BatchGetCommandOutput = await this.doc.send(
          new BatchGetCommand({ RequestItems: { [table]: { Keys: keys } } }),
        );
        for (const item of res.Responses?.[table] ?? [])
          out.set(String(item.pk).slice(PREFIX.length), {
            record: item.record as WatchdogRecord,
            version: Number(item.v),
          });
        keys = res.UnprocessedKeys?.[table]?.Keys;
        if (keys?.length) await new Promise((r) => setTimeout(r, Math.min(1_000, 25 * 2 ** attempt)));
      }
    }
    return out;
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

const PREFIX = 'WATCHDOG#';

function key(shootKey: string) {
  return { pk: `${PREFIX}${shootKey}`, sk: 'WATCHDOG' };
}
