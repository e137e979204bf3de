import { z } from 'zod';
import { task } from '../shared/task.js';
import { migrationService } from './deps.js';
import { ref } from './input.js';

const service = migrationService();

/** wait-final-snapshot: one look into the source's backup bucket (list only) per call. */
export const handler = task(z.object({ action: z.literal('wait-final-snapshot'), ref }).strict(), async (event) => service.waitFinalSnapshot(event.ref));
