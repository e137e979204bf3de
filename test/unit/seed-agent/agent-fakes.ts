import { makeSnapshot, type SnapshotStore } from '../../../core/snapshots/index.js';
import type { GardenClient } from '../../../adapters/http/garden-client.js';
import { MemoryCommandInbox } from '../../../seed/agent/inbox.js';
import type { TaskAnswers } from '../../../seed/agent/task-answers.js';

/** A queue, a garden and Step Functions in memory: what the agent's loop talks to. */
export function agentFakes() {
  const inbox = new MemoryCommandInbox();
  const heartbeats: { controlPlanes: { technicalID: string }[]; capabilities?: string[] }[] = [];
  const answered: { token: string; kind: string; body: string }[] = [];
  const garden = {
    request: async (
      _method: string,
      _path: string,
      options: { body: { controlPlanes: { technicalID: string }[]; capabilities?: string[] } },
    ) => {
      heartbeats.push(options.body);
      return { status: 200, body: { identity: 'seed-a-id', commandQueueUrl: 'memory://queue' } };
    },
  } as unknown as GardenClient;
  const answers: TaskAnswers = {
    success: async (token, body) => void answered.push({ token, kind: 'success', body }),
    failure: async (token, error, cause) => void answered.push({ token, kind: error, body: cause }),
    heartbeat: async () => undefined,
  };
  return { inbox, heartbeats, answered, garden, answers };
}

/** A full snapshot of the shoot up to `lastRevision` in `store`: what a restore of these tests reads. */
export async function storeFullSnapshot(
  store: SnapshotStore,
  input: { technicalID: string; lastRevision: number; final: boolean },
): Promise<void> {
  const full = makeSnapshot({ ...input, kind: 'Full', startRevision: 0, createdOn: 1, compressionSuffix: '' });
  await store.put(full.key, new Uint8Array([1]));
}
