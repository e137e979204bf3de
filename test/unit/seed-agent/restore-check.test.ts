import { describe, expect, it } from 'vitest';
import { makeSnapshot, type SnapshotFields } from '../../../core/snapshots/index.js';
import { AgentCommandError } from '../../../seed/agent/errors.js';
import { summarizeRestore } from '../../../seed/agent/restore-check.js';

const shoot = { project: 'dev', name: 'api1', technicalID: 'shoot--dev--api1' };
const snap = (fields: Partial<SnapshotFields>) =>
  makeSnapshot({
    technicalID: shoot.technicalID,
    kind: 'Full',
    startRevision: 0,
    lastRevision: 100,
    createdOn: 1,
    compressionSuffix: '',
    final: false,
    ...fields,
  });

describe('summarizeRestore', () => {
  it.each([
    {
      name: 'one full snapshot',
      snapshots: [snap({})],
      expected: { restoredRevision: 100, snapshots: 1, final: false },
    },
    {
      name: 'full, then a final full',
      snapshots: [snap({}), snap({ lastRevision: 101, final: true, createdOn: 2 })],
      expected: { restoredRevision: 101, snapshots: 2, final: true },
    },
    {
      name: 'full and a delta',
      snapshots: [snap({}), snap({ kind: 'Incr', startRevision: 101, lastRevision: 140 })],
      expected: { restoredRevision: 140, snapshots: 2, final: false },
    },
  ])('$name', ({ snapshots, expected }) => {
    expect(summarizeRestore({ technicalID: shoot.technicalID, snapshots })).toEqual(expected);
  });

  it.each([
    { name: 'no snapshots', snapshots: [], expectedLastRevision: undefined },
    {
      name: 'a gap',
      snapshots: [snap({}), snap({ kind: 'Incr', startRevision: 120, lastRevision: 140 })],
      expectedLastRevision: undefined,
    },
    { name: 'short of the expected revision', snapshots: [snap({})], expectedLastRevision: 101 },
  ])('fails with EtcdRestoreFailed on $name', ({ snapshots, expectedLastRevision }) => {
    const act = () =>
      summarizeRestore({
        technicalID: shoot.technicalID,
        snapshots,
        ...(expectedLastRevision === undefined ? {} : { expectedLastRevision }),
      });
    expect(act).toThrow(AgentCommandError);
    expect(act).toThrow(expect.objectContaining({ failure: 'EtcdRestoreFailed' }) as Error);
  });

  it('restores nothing for a hibernated shoot that never took a snapshot', () => {
    expect(summarizeRestore({ technicalID: shoot.technicalID, snapshots: [], hibernated: true })).toEqual({
      restoredRevision: 0,
      snapshots: 0,
      final: false,
    });
  });
});
