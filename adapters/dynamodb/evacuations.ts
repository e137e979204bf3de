import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Evacuation } from '../../core/evacuation/record.js';
import { evacuationChanged, type EvacuationStore } from '../../core/evacuation/store.js';
import { evacuationKey } from './keys.js';
import { queryPartition } from './partition.js';

/** Evacuations in the garden table: one partition, one item per seed (its latest evacuation), versioned. */
export class DynamoEvacuationStore implements EvacuationStore {
  private readonly doc: DynamoDBDocumentClient;
  constructor(private readonly options: { tableName: string; client?: DynamoDBClient }) {
    this.doc = DynamoDBDocumentClient.from(options.client ?? new DynamoDBClient({}), {
      marshallOptions: { removeUndefinedValues: true },
    });
  }

  async list(): Promise<Evacuation[]> {
    const items = await queryPartition(this.doc, this.options.tableName, evacuationKey('').pk);
    return items.map((item) => item.record as Evacuation);
  }

  async get(seed: string): Promise<Evacuation | undefined> {
    const res = await this.doc.send(
      new GetCommand({ TableName: this.options.tableName, Key: evacuationKey(seed), ConsistentRead: true }),
    );
    return res.Item ? (res.Item.record as Evacuation) : undefined;
  }

  /** Conditional on the version read: none stored, or exactly that one; a failed condition carries the stored record. */
  async put(record: Evacuation, expectedVersion: number | undefined): Promise<void> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.options.tableName,
          Item: { ...evacuationKey(record.seed), version: record.version, phase: record.phase, record },
          ...(expectedVersion === undefined
            ? { ConditionExpression: 'attribute_not_exists(pk)' }
            : { ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': expectedVersion } }),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const current = error.Item
        ? (unmarshall(error.Item as Parameters<typeof unmarshall>[0]).record as Evacuation)
        : undefined;
      throw evacuationChanged(record.seed, expectedVersion, current, error);
    }
  }
}
