import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { ConflictError } from '../../core/errors.js';
import type { LockCondition } from '../../core/migration/lock.js';
import type { MigrationRecord } from '../../core/migration/record.js';
import type { MigrationStore } from '../../core/migration/store.js';

/**
 * Migration records in the garden table: `pk = MIGRATION#<project>#<name>`. `migrationId` and `state`
 * are top-level attributes so that the lock conditions of core/migration/lock.ts apply to them as written.
 */
export class DynamoMigrationStore implements MigrationStore {
  private readonly doc: DynamoDBDocumentClient;

  constructor(private readonly options: { tableName: string; client?: DynamoDBClient }) {
    this.doc = DynamoDBDocumentClient.from(options.client ?? new DynamoDBClient({}), {
      marshallOptions: { removeUndefinedValues: true },
    });
  }

  async get(project: string, name: string): Promise<MigrationRecord | undefined> {
    const res = await this.doc.send(
      new GetCommand({ TableName: this.options.tableName, Key: key(project, name), ConsistentRead: true }),
    );
    return res.Item ? (res.Item.record as MigrationRecord) : undefined;
  }

  async put(record: MigrationRecord, condition: LockCondition): Promise<void> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.options.tableName,
          Item: {
            ...key(record.shoot.project, record.shoot.name),
            migrationId: record.id,
            state: record.state,
            record,
          },
          ConditionExpression: condition.expression,
          ExpressionAttributeNames: { ...condition.names },
          ExpressionAttributeValues: { ...condition.values },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        const current = error.Item
          ? (unmarshall(error.Item as Parameters<typeof unmarshall>[0]).record as MigrationRecord)
          : undefined;
        throw new ConflictError(
          `migration of ${record.shoot.project}/${record.shoot.name}: ${condition.description} does not hold`,
          {
            code: 'MigrationLockLost',
            cause: error,
            current,
          },
        );
      }
      throw error;
    }
  }
}

function key(project: string, name: string) {
  return { pk: `MIGRATION#${project}#${name}`, sk: 'MIGRATION' };
}
