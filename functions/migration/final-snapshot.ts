import { z } from 'zod';
import { S3SnapshotStore } from '../../adapters/s3/snapshot-store.js';
import { FinalSnapshotWait } from '../../core/migration/final-snapshot-wait.js';
import { optionalNumberEnv } from '../shared/env.js';
import { migrationJournal } from '../shared/migration-journal.js';
import { task } from '../shared/task.js';
import { ref } from './input.js';

const wait = new FinalSnapshotWait({
  journal: migrationJournal(),
  snapshots: (bucket) => new S3SnapshotStore({ bucket }),
  waitFinalSnapshotMs: optionalNumberEnv('WAIT_FINAL_SNAPSHOT_MS'),
});

/** wait-final-snapshot: looks into the source's backup bucket (list only) for a while per call. */
export const handler = task(z.object({ action: z.literal('wait-final-snapshot'), ref }).strict(), async (event) =>
  wait.waitFinalSnapshot(event.ref),
);
