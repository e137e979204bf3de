import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { SourceWait, SourceWaitIndex } from '../../core/migration/source-waits.js';
import { sourceWaitKey } from './keys.js';
import { queryPartition } from './partition.js';

/** Source waits in the garden table, one partition per source seed (`SOURCEWAIT#<seed>`), one item per shoot. */
export class DynamoSourceWaitIndex implements SourceWaitIndex {
  private readonly doc: DynamoDBDocumentClient;
  constructor(private readonly options: { tableName: string; client?: DynamoDBClient }) {
    this.doc = DynamoDBDocumentClient.from(options.client ?? new DynamoDBClient({}), {
      marshallOptions: { removeUndefinedValues: true },
    });
  }

  async put(wait: SourceWait): Promise<void> {
    await this.doc.send(
      new PutCommand({
        TableName: this.options.tableName,
        Item: {
          ...sourceWaitKey(wait.seed, wait.project, wait.name),
          migrationId: wait.migrationId,
          step: wait.step,
          wait,
        },
      }),
    );
  }

  async listForSeed(seed: string): Promise<SourceWait[]> {
    const items = await queryPartition(this.doc, this.options.tableName, sourceWaitKey(seed, '', '').pk);
    return items.map((item) => item.wait as SourceWait);
  }

  async remove(wait: Pick<SourceWait, 'seed' | 'project' | 'name' | 'migrationId' | 'step'>): Promise<void> {
    try {
      await this.doc.send(
        new DeleteCommand({
          TableName: this.options.tableName,
          Key: sourceWaitKey(wait.seed, wait.project, wait.name),
          // A later step (or migration) of the same shoot filed its own wait meanwhile: that one stays.
          ConditionExpression: 'migrationId = :id AND #step = :step',
          ExpressionAttributeNames: { '#step': 'step' },
          ExpressionAttributeValues: { ':id': wait.migrationId, ':step': wait.step },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}
