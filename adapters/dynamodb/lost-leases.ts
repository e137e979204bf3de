import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { LostLease, LostLeaseStore } from '../../core/garden/lease-monitor.js';
import { lostLeaseKey } from './keys.js';
import { queryPartition } from './partition.js';

/** The lease monitor's memory of lost leases in the garden table: one partition, one item per seed. */
export class DynamoLostLeaseStore implements LostLeaseStore {
  private readonly doc: DynamoDBDocumentClient;
  constructor(private readonly options: { tableName: string; client?: DynamoDBClient }) {
    this.doc = DynamoDBDocumentClient.from(options.client ?? new DynamoDBClient({}), {
      marshallOptions: { removeUndefinedValues: true },
    });
  }

  async list(): Promise<LostLease[]> {
    const items = await queryPartition(this.doc, this.options.tableName, lostLeaseKey('').pk);
    return items.map((item) => item.loss as LostLease);
  }

  async remember(loss: LostLease): Promise<boolean> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.options.tableName,
          Item: { ...lostLeaseKey(loss.seed), lastRenewTime: loss.lastRenewTime, loss },
          ConditionExpression: 'attribute_not_exists(pk) OR lastRenewTime <> :renew',
          ExpressionAttributeValues: { ':renew': loss.lastRenewTime },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async markAnnounced(seed: string, lastRenewTime: string): Promise<void> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.options.tableName,
          Key: lostLeaseKey(seed),
          UpdateExpression: 'SET loss.announced = :yes',
          ConditionExpression: 'lastRenewTime = :renew',
          ExpressionAttributeValues: { ':yes': true, ':renew': lastRenewTime },
        }),
      );
    } catch (error) {
      // The lease was renewed and lost again meanwhile: that newer loss is another round's to announce.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  async forget(seed: string): Promise<void> {
    await this.doc.send(new DeleteCommand({ TableName: this.options.tableName, Key: lostLeaseKey(seed) }));
  }
}
