import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoGardenRepository } from '../../adapters/dynamodb/garden-repository.js';
import { DynamoMigrationStore } from '../../adapters/dynamodb/migration-store.js';
import { DynamoShootStateStore } from '../../adapters/dynamodb/shoot-state-store.js';
import { EventBridgeSink } from '../../adapters/eventbridge/event-sink.js';
import { MigrationJournal } from '../../core/migration/journal.js';
import { requireEnv } from './env.js';

const client = new DynamoDBClient({});

/** The migration record as every migration function (and the API) reads and writes it: the garden table, events on the bus. */
export function migrationJournal(): MigrationJournal {
  const tableName = requireEnv('TABLE_NAME');
  return new MigrationJournal({
    garden: new DynamoGardenRepository({ tableName, client }),
    migrations: new DynamoMigrationStore({ tableName, client }),
    events: new EventBridgeSink({ busName: requireEnv('EVENT_BUS_NAME') }),
  });
}

export function shootStateStore(): DynamoShootStateStore {
  return new DynamoShootStateStore({ tableName: requireEnv('TABLE_NAME'), client });
}
