import { describe, expect, it } from 'vitest';
import { COMMAND_API_VERSION, commandSuccess, type CommandOf } from '../../../core/commands/index.js';
import { MemoryExtensionWorld } from '../../../core/extensions/index.js';
import { InMemoryBlobStore } from '../../../core/shootstate/index.js';
import { InMemorySnapshotStore, makeSnapshot, type SnapshotFields } from '../../../core/snapshots/index.js';
import { AgentControls } from '../../harness/agent/controls.js';
import { CommandLedger, type CommandAnswer } from '../../harness/agent/ledger.js';
import { AgentCommandError, summarizeRestore, TestSeedRuntime } from '../../harness/agent/runtime.js';

const shoot = { project: 'dev', name: 'api1', technicalID: 'shoot--dev--api1' };
const envelope = { apiVersion: COMMAND_API_VERSION, shoot, issuedAt: '2025-01-01T00:00:00.000Z' } as const;
const success = (commandId: string): CommandAnswer => ({
  kind: 'success',
  output: commandSuccess({ ...envelope, seed: 'src', commandId, type: 'restart', pod: 'p', dependency: 'kube-apiserver' } as CommandOf<'restart'>, { pod: 'p', restarted: true }, new Date(0)),
});

describe('CommandLedger', () => {
  it('runs a command once, attaches a second token while it runs, and answers both', () => {
    // Prepare
    const ledger = new CommandLedger();

    // Act
    const first = ledger.begin('m/1', 't1');
    const second = ledger.begin('m/1', 't2');
    const tokens = ledger.finish('m/1', success('m/1'));

    // Assess
    expect(first).toEqual({ action: 'run' });
    expect(second).toEqual({ action: 'attached' });
    expect(tokens).toEqual(['t1', 't2']);
  });

  it('replays a recorded success to a retried command with a new token', () => {
    const ledger = new CommandLedger();
    ledger.begin('m/1', 't1');
    const answer = success('m/1');
    ledger.finish('m/1', answer);

    expect(ledger.begin('m/1', 't3')).toEqual({ action: 'replay', answer });
  });

  it('forgets a failure, so that a resumed migration runs the command again', () => {
    const ledger = new CommandLedger();
    ledger.begin('m/restore-etcd', 't1');
    ledger.finish('m/restore-etcd', { kind: 'failure', error: 'EtcdRestoreFailed', cause: '{}' });

    expect(ledger.begin('m/restore-etcd', 't2')).toEqual({ action: 'run' });
  });
});

describe('AgentControls', () => {
  it.each([
    { name: 'no controls', setup: (_c: AgentControls) => {}, decisions: ['run', 'run', 'run'] },
    { name: 'failOn migrate', setup: (c: AgentControls) => c.failOn('migrate', 'RuntimeUnavailable'), decisions: ['fail', 'run', 'fail'] },
    { name: 'failOn migrate once', setup: (c: AgentControls) => c.failOn('migrate', 'RuntimeUnavailable', { times: 1 }), decisions: ['fail', 'run', 'run'] },
    { name: 'silenceAfter migrate', setup: (c: AgentControls) => c.silenceAfter('migrate'), decisions: ['run', 'ignore', 'ignore'] },
    { name: 'silenceAfter restore', setup: (c: AgentControls) => c.silenceAfter('restore'), decisions: ['run', 'run', 'run'] },
  ])('$name', ({ setup, decisions }) => {
    // Prepare
    const controls = new AgentControls();
    setup(controls);
    const commands = [
      { type: 'migrate' as const, commandId: 'm/migrate-extensions' },
      { type: 'delete-control-plane' as const, commandId: 'm/delete-source-control-plane' },
      { type: 'migrate' as const, commandId: 'n/migrate-extensions' },
    ];

    // Act
    const kinds = commands.map((c) => controls.decide(c).kind);

    // Assess
    expect(kinds).toEqual(decisions);
  });

  it('still answers a redelivery of the command it went silent after', () => {
    const controls = new AgentControls();
    controls.silenceAfter('migrate');
    controls.decide({ type: 'migrate', commandId: 'm/migrate-extensions' });

    expect(controls.decide({ type: 'migrate', commandId: 'm/migrate-extensions' }).kind).toBe('run');
    expect(controls.silenced).toBe('m/migrate-extensions');
  });

  it('refuses failure names the protocol does not know', () => {
    expect(() => new AgentControls().failOn('migrate', 'Nope' as never)).toThrow(RangeError);
  });
});

const snap = (fields: Partial<SnapshotFields>) =>
  makeSnapshot({ technicalID: shoot.technicalID, kind: 'Full', startRevision: 0, lastRevision: 100, createdOn: 1, compressionSuffix: '', final: false, ...fields });

describe('summarizeRestore', () => {
  it.each([
    { name: 'one full snapshot', snapshots: [snap({})], expected: { restoredRevision: 100, snapshots: 1, final: false } },
    { name: 'full, then a final full', snapshots: [snap({}), snap({ lastRevision: 101, final: true, createdOn: 2 })], expected: { restoredRevision: 101, snapshots: 2, final: true } },
    { name: 'full and a delta', snapshots: [snap({}), snap({ kind: 'Incr', startRevision: 101, lastRevision: 140 })], expected: { restoredRevision: 140, snapshots: 2, final: false } },
  ])('$name', ({ snapshots, expected }) => {
    expect(summarizeRestore({ technicalID: shoot.technicalID, snapshots })).toEqual(expected);
  });

  it.each([
    { name: 'no snapshots', snapshots: [], expectedLastRevision: undefined },
    { name: 'a gap', snapshots: [snap({}), snap({ kind: 'Incr', startRevision: 120, lastRevision: 140 })], expectedLastRevision: undefined },
    { name: 'short of the expected revision', snapshots: [snap({})], expectedLastRevision: 101 },
  ])('fails with EtcdRestoreFailed on $name', ({ snapshots, expectedLastRevision }) => {
    const act = () => summarizeRestore({ technicalID: shoot.technicalID, snapshots, ...(expectedLastRevision === undefined ? {} : { expectedLastRevision }) });
    expect(act).toThrow(AgentCommandError);
    expect(act).toThrow(expect.objectContaining({ failure: 'EtcdRestoreFailed' }) as Error);
  });

  it('restores nothing for a hibernated shoot that never took a snapshot', () => {
    expect(summarizeRestore({ technicalID: shoot.technicalID, snapshots: [], hibernated: true })).toEqual({ restoredRevision: 0, snapshots: 0, final: false });
  });
});

describe('TestSeedRuntime', () => {
  function runtimes() {
    const world = new MemoryExtensionWorld();
    const blobs = new InMemoryBlobStore('gl-state');
    const backups = new InMemorySnapshotStore();
    const common = { world, blobStore: () => blobs, snapshotStore: () => backups };
    return { world, backups, source: new TestSeedRuntime({ seed: 'src', ...common }), destination: new TestSeedRuntime({ seed: 'dst', ...common }) };
  }
  const cmd = <T extends CommandOf<'migrate'> | CommandOf<'delete-control-plane'> | CommandOf<'restore'>>(c: Omit<T, 'apiVersion' | 'shoot' | 'issuedAt'>): T => ({ ...envelope, ...c }) as T;

  it('migrates on the source, deletes there, and restores on the destination adopting the same external resources', async () => {
    // Prepare
    const { world, backups, source, destination } = runtimes();
    await backups.put(snap({ lastRevision: 101, final: true }).key, new Uint8Array([1]));

    // Act
    const migrated = await source.execute(cmd<CommandOf<'migrate'>>({ type: 'migrate', commandId: 'm/migrate-extensions', seed: 'src', stateBucket: 'gl-state' }));
    const again = await source.execute(cmd<CommandOf<'migrate'>>({ type: 'migrate', commandId: 'm/migrate-extensions', seed: 'src', stateBucket: 'gl-state' }));
    const deleted = await source.execute(cmd<CommandOf<'delete-control-plane'>>({ type: 'delete-control-plane', commandId: 'm/delete', seed: 'src', keepBackups: true, keepExternalResources: true }));
    const deletedAgain = await source.execute(cmd<CommandOf<'delete-control-plane'>>({ type: 'delete-control-plane', commandId: 'm/delete', seed: 'src', keepBackups: true, keepExternalResources: true }));
    const restored = await destination.execute(
      cmd<CommandOf<'restore'>>({
        type: 'restore',
        commandId: 'm/restore',
        seed: 'dst',
        hibernated: false,
        etcd: { bucket: 'gl-backup-dst', expectedLastRevision: 101, final: true },
        extensions: { shootState: migrated.shootState, shootStateVersion: 1, stateBucket: 'gl-state' },
      }),
    );

    // Assess
    expect(migrated.shootState.extensions).toHaveLength(8);
    expect(migrated.extensions.every((e) => e.action === 'migrate')).toBe(true);
    expect(again.shootState.extensions).toEqual(migrated.shootState.extensions);
    expect(deleted).toEqual({ deleted: true, extensionsDropped: 8 });
    expect(deletedAgain).toEqual({ deleted: false, extensionsDropped: 0 });
    expect(restored.etcd).toEqual({ restoredRevision: 101, snapshots: 1, final: true });
    expect(restored.extensions?.every((e) => e.action === 'restore')).toBe(true);
    // The source adopted its shoot (8 extensions, created once); the restore adopted them again instead of recreating.
    expect(world.externalKeys()).toHaveLength(8);
    expect(world.externalKeys().every((k) => world.externalResource(k)?.creations === 1)).toBe(true);
    expect(world.seedObjects('src')).toEqual([]);
    expect(world.seedObjects('dst')).toHaveLength(8);
    expect(source.controlPlanes()).toEqual([]);
    expect(destination.controlPlanes()).toEqual([expect.objectContaining({ technicalID: shoot.technicalID, active: true, etcdReady: true })]);
  });

  it('refuses a migrate for a deleted control plane and, without adoption, for an unknown one', async () => {
    const { source } = runtimes();
    const strict = new TestSeedRuntime({ seed: 'src', adoptUnknownShoots: false, blobStore: () => new InMemoryBlobStore(), snapshotStore: () => new InMemorySnapshotStore() });
    await source.execute(cmd<CommandOf<'delete-control-plane'>>({ type: 'delete-control-plane', commandId: 'x', seed: 'src', keepBackups: true, keepExternalResources: true }));
    await source.host({ technicalID: 'shoot--dev--other' });
    const migrate = cmd<CommandOf<'migrate'>>({ type: 'migrate', commandId: 'm/1', seed: 'src', stateBucket: 'gl-state' });

    await expect(strict.execute(migrate)).rejects.toMatchObject({ failure: 'ControlPlaneNotFound' });
    // The delete of a never-known shoot leaves nothing to adopt later either.
    expect(source.controlPlanes().map((p) => p.technicalID)).toEqual(['shoot--dev--other']);
  });

  it('answers NotOwner on a restore while the owner check does not name the seed', async () => {
    const runtime = new TestSeedRuntime({ seed: 'dst', blobStore: () => new InMemoryBlobStore(), snapshotStore: () => new InMemorySnapshotStore(), ownerCheck: async () => 'not-owner' });
    const restore = cmd<CommandOf<'restore'>>({ type: 'restore', commandId: 'm/r', seed: 'dst', hibernated: true, etcd: { bucket: 'b-dst', final: false } });

    await expect(runtime.execute(restore)).rejects.toMatchObject({ failure: 'NotOwner' });
  });
});
