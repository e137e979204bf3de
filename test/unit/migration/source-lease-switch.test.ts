import { describe, expect, it } from 'vitest';
import { commandSuccess } from '../../../core/commands/protocol.js';
import { expiredLease } from '../../../core/garden/lease-monitor.js';
import { MemoryGardenRepository } from '../../../core/garden/memory-repository.js';
import { GardenService } from '../../../core/garden/service.js';
import { SourceLeaseExpiredError } from '../../../core/migration/errors.js';
import { MigrationJournal } from '../../../core/migration/journal.js';
import { MigrationAdmission, type MigrationExecutionInput } from '../../../core/migration/migration-admission.js';
import { PathSteps } from '../../../core/migration/path-steps.js';
import { PreCopySteps } from '../../../core/migration/pre-copy-steps.js';
import { SeedAnswers, SeedCommands } from '../../../core/migration/seed-steps.js';
import { MemorySourceWaitIndex, SourceLeaseSwitch, type TaskTokens } from '../../../core/migration/source-waits.js';
import { MemoryMigrationStore } from '../../../core/migration/store.js';
import { InMemoryShootStateStore } from '../../../core/shootstate/store.js';
import { toTaskError } from '../../../functions/shared/task-errors.js';
import { createAnswered, ManualClock, seedBody, shootBody } from '../garden/builders.js';

const READY = {
  conditions: [
    { type: 'GardenletReady', status: 'True' },
    { type: 'BackupBucketsReady', status: 'True' },
  ],
  leaseDurationSeconds: 6,
};

async function world(mode: 'auto' | 'good') {
  const clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
  const garden = new MemoryGardenRepository({ clock });
  const service = new GardenService({
    repository: garden,
    clock,
    provisioner: {
      provision: async (n) => ({ commandQueueUrl: `https://sqs.local/000000000000/gl-seed-${n}.fifo` }),
      deprovision: async () => {},
    },
  });
  for (const [i, name] of ['src', 'dst'].entries()) {
    await service.putSeed(
      name,
      seedBody({
        spec: {
          taints: undefined,
          capacity: undefined,
          backup: { bucket: `gl-backup-${name}`, region: 'eu-west-1' },
          networks: { nodes: `10.${i}.0.0/16`, pods: '10.200.0.0/16', services: '10.201.0.0/16' },
        },
      }),
    );
    await service.heartbeat(name, READY);
  }
  await service.putShoot('dev', 'api1', shootBody({ spec: { seedName: 'src' } }));
  await createAnswered(garden, 'dev', 'api1', clock.now());
  const events: { type: string; detail: Record<string, unknown> }[] = [];
  const migrations = new MemoryMigrationStore();
  const journal = new MigrationJournal({
    garden,
    migrations,
    clock,
    events: { publish: async (type, detail) => void events.push({ type, detail }) },
  });
  const started: MigrationExecutionInput[] = [];
  const admission = new MigrationAdmission({
    journal,
    workflow: { start: async ({ input }) => void started.push(input), ended: async () => false },
  });
  const waits = new MemorySourceWaitIndex();
  const shootStates = new InMemoryShootStateStore();
  const failed: { taskToken: string; error: string; cause: string }[] = [];
  const tasks: TaskTokens = { fail: async (f) => (failed.push(f), 'failed') };
  await admission.start('dev', 'api1', { destinationSeed: 'dst', mode });
  const ref = started[0]!.ref;
  const paths = new PathSteps({ journal, heartbeatIntervalMs: 2_000, sourceWaits: waits });
  await paths.choosePath(ref);
  const commands = new SeedCommands({ journal, shootStates, stateBucket: 'state', sourceWaits: waits });
  const answers = new SeedAnswers({ journal, shootStates, sourceWaits: waits });
  // The pre-copy, whose restore ahead waits on the destination's agent: it files nothing under the source.
  const preCopy = new PreCopySteps(journal);
  await preCopy.beginPreCopy(ref);
  await preCopy.completePreCopy(ref, { copied: 1, skipped: 0, bytes: 1, lastRevision: 5 });
  const { command: ahead } = await commands.beginCommand(ref, 'restore-etcd-ahead', { taskToken: 'ahead-token' });
  await answers.completeCommand(
    ref,
    'restore-etcd-ahead',
    commandSuccess(
      ahead as never,
      { etcd: { restoredRevision: 5, snapshots: 1, final: false, ahead: true } } as never,
      clock.now(),
    ),
  );
  return {
    clock,
    garden,
    ref,
    events,
    waits,
    failed,
    paths,
    journal,
    commands,
    answers,
    early: new SourceLeaseSwitch({ waits, migrations, tasks }),
    sourceLease: async () => expiredLease((await garden.getSeed('src'))!, clock.now()),
  };
}

describe("early switch to the bad path when the source's lease expires (mode auto)", () => {
  it('fails the waiting source step by its task token with SourceLeaseExpired, and the switch says why', async () => {
    // Prepare: the good path sends migrate-extensions while the source's lease holds; then its agent goes silent.
    const w = await world('auto');
    await w.commands.beginCommand(w.ref, 'migrate-extensions', { taskToken: 'token-1' });
    expect(await w.waits.listForSeed('src')).toEqual([
      expect.objectContaining({ step: 'migrate-extensions', taskToken: 'token-1', migrationId: w.ref.migrationId }),
    ]);
    expect(await w.sourceLease()).toBeUndefined();
    w.clock.advance(6_000);
    const lease = (await w.sourceLease())!;

    // Act: the lease monitor's round, then the state machine's catch.
    const outcome = await w.early.failWaitsOn(lease);
    await w.paths.switchToBadPath(w.ref, { Error: w.failed[0]!.error, Cause: w.failed[0]!.cause });

    // Assess
    expect(outcome).toEqual([expect.objectContaining({ step: 'migrate-extensions', outcome: 'failed' })]);
    expect(w.failed).toEqual([
      {
        taskToken: 'token-1',
        error: 'SourceLeaseExpired',
        cause: expect.stringMatching(
          /^the source seed src's lease expired at 2026-01-01T00:00:06.000Z \(last renewed 2026-01-01T00:00:00.000Z, valid 6 s; seen by the lease monitor\)/,
        ),
      },
    ]);
    expect(await w.waits.listForSeed('src')).toEqual([]);
    const record = (await w.journal.migrations.get('dev', 'api1'))!;
    expect(record.path).toBe('bad');
    expect(record.badPathSwitch).toEqual({
      failedStep: 'migrate-extensions',
      reason: expect.stringMatching(/^SourceLeaseExpired: the source seed src's lease expired/),
    });
    expect(record.steps.find((s) => s.id === 'migrate-extensions')).toMatchObject({
      state: 'failed',
      message: expect.stringMatching(/SourceLeaseExpired.*switched to the bad path$/),
    });
    expect(w.events.filter((e) => e.type === 'MigrationSwitchedToBadPath')).toEqual([
      {
        type: 'MigrationSwitchedToBadPath',
        detail: expect.objectContaining({ failedStep: 'migrate-extensions', early: true }),
      },
    ]);
  });

  it("fails the dispatch at once when the source's lease has already expired", async () => {
    const w = await world('auto');
    w.clock.advance(7_000);
    const error = await w.commands
      .beginCommand(w.ref, 'migrate-extensions', { taskToken: 'token-1' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceLeaseExpiredError);
    expect((error as Error).message).toMatch(/lease expired .*seen by the dispatch/);
    expect((toTaskError(error) as Error).name).toBe('SourceLeaseExpired');
    expect(await w.waits.listForSeed('src')).toEqual([]);
  });

  it('cuts short delete-source-control-plane too, not only migrate-extensions', async () => {
    const w = await world('auto');
    const { command } = await w.commands.beginCommand(w.ref, 'migrate-extensions', { taskToken: 'token-1' });
    await w.answers.persistShootState(
      w.ref,
      commandSuccess(
        command as never,
        {
          extensions: [],
          shootState: {
            apiVersion: 'core.gardenless.io/v1',
            kind: 'ShootState',
            shoot: command.shoot,
            collectedAt: w.clock.now().toISOString(),
            collectedAfter: 'migrate',
            extensions: [],
          },
        } as never,
        w.clock.now(),
      ),
    );
    expect(await w.waits.listForSeed('src')).toEqual([]);
    // The garden steps between (owner record, final snapshot) are not the agent's; jump to the source's second command.
    const record = (await w.journal.migrations.get('dev', 'api1'))!;
    await w.journal.save({
      ...record,
      steps: record.steps.map((s) =>
        s.id === 'delete-owner-record' || s.id === 'wait-final-snapshot' ? { ...s, state: 'succeeded' } : s,
      ),
    });
    await w.commands.beginCommand(w.ref, 'delete-source-control-plane', { taskToken: 'token-2' });
    w.clock.advance(6_000);
    expect(await w.early.failWaitsOn((await w.sourceLease())!)).toEqual([
      expect.objectContaining({ step: 'delete-source-control-plane', outcome: 'failed' }),
    ]);
    expect(w.failed.map((f) => f.taskToken)).toEqual(['token-2']);
  });

  it('leaves a wait alone that no longer matches its migration: the step was answered', async () => {
    const w = await world('auto');
    await w.commands.beginCommand(w.ref, 'migrate-extensions', { taskToken: 'token-1' });
    const stale = await w.waits.listForSeed('src');
    const record = (await w.journal.migrations.get('dev', 'api1'))!;
    await w.journal.save({
      ...record,
      steps: record.steps.map((s) => (s.id === 'migrate-extensions' ? { ...s, state: 'succeeded' } : s)),
    });
    w.clock.advance(6_000);
    expect(stale).toHaveLength(1);
    expect(await w.early.failWaitsOn((await w.sourceLease())!)).toEqual([
      expect.objectContaining({ outcome: 'stale' }),
    ]);
    expect(w.failed).toEqual([]);
  });
});

describe('mode good keeps waiting for the command timeout', () => {
  it('neither fails the dispatch on an expired lease nor files the task token', async () => {
    const w = await world('good');
    w.clock.advance(7_000);
    expect(await w.sourceLease()).toBeDefined();
    await w.commands.beginCommand(w.ref, 'migrate-extensions', { taskToken: 'token-1' });
    expect(await w.waits.listForSeed('src')).toEqual([]);
    expect(await w.early.failWaitsOn((await w.sourceLease())!)).toEqual([]);
    expect(w.failed).toEqual([]);
  });
});
