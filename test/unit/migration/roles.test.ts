import { describe, expect, it } from 'vitest';
import { commandSuccess } from '../../../core/commands/protocol.js';
import type { SeedNotice } from '../../../core/migration/owner-notice.js';
import { AdmissionError, ConflictError, NotFoundError } from '../../../core/errors.js';
import { MemoryGardenRepository } from '../../../core/garden/memory-repository.js';
import { GardenService } from '../../../core/garden/service.js';
import {
  ApiRecordWriter,
  DEFAULT_API_RECORD_TTL_SECONDS,
  DestinationNotServingError,
  InMemoryApiRecords,
  MIGRATION_API_RECORD_TTL_SECONDS,
} from '../../../core/dns/index.js';
import { ApiRecordSteps, HAND_OVER_AHEAD_MS } from '../../../core/migration/api-record-steps.js';
import { CopySteps } from '../../../core/migration/copy-steps.js';
import { FinalSnapshotWait } from '../../../core/migration/final-snapshot-wait.js';
import { FinalizeSteps } from '../../../core/migration/finalize-steps.js';
import { MigrationJournal, type MigrationRef } from '../../../core/migration/journal.js';
import { MigrationAdmission, type MigrationExecutionInput } from '../../../core/migration/migration-admission.js';
import { OwnerSteps } from '../../../core/migration/owner-steps.js';
import { LIVE_WALK_ATTEMPTS, LIVE_WALK_RETRY_SECONDS, PathSteps } from '../../../core/migration/path-steps.js';
import { PreCopySteps, type PreCopyOutput } from '../../../core/migration/pre-copy-steps.js';
import { SeedAnswers, SeedCommands } from '../../../core/migration/seed-steps.js';
import { resumePoint } from '../../../core/migration/record.js';
import { MemorySourceWaitIndex, SourceLeaseSwitch } from '../../../core/migration/source-waits.js';
import { expiredLease } from '../../../core/garden/lease-monitor.js';
import { MemoryMigrationStore } from '../../../core/migration/store.js';
import { InMemoryOwnerRecords } from '../../../core/ownership/memory-owner-records.js';
import { fenceBound } from '../../../core/ownership/fence.js';
import type { OwnershipTimings } from '../../../core/ownership/timings.js';
import { InMemoryShootStateStore } from '../../../core/shootstate/store.js';
import { generateShootSecrets } from '../../../core/pki/shoot-secrets.js';
import {
  LocalDataKeys,
  openSecrets,
  seedContext,
  ShootSecretsKeeper,
  type ShootSecrets,
} from '../../../core/shootstate/index.js';
import { makeSnapshot } from '../../../core/snapshots/name.js';
import { InMemorySnapshotStore } from '../../../core/snapshots/memory-store.js';
import { DEFAULT_SIDECAR_SETTINGS } from '../../../harness/fixtures/index.js';
import { createAnswered, ManualClock, rejection, seedBody, shootBody } from '../garden/builders.js';

const DOMAIN = 'internal.gardenless.test';
const READY = {
  conditions: [
    { type: 'GardenletReady', status: 'True' },
    { type: 'BackupBucketsReady', status: 'True' },
  ],
};
const RECORD = `owner.api1.dev.${DOMAIN}`;
const API = 'api.api1.dev.shoots.gardenless.test';
/** A heartbeat that reports the shoot's control plane serving behind `address`. */
const serving = (address: string, port = 443) => ({
  ...READY,
  controlPlanes: [{ technicalID: 'shoot--dev--api1', active: true, externalUrl: `https://${address}:${port}` }],
});
const advertised = async (w: Awaited<ReturnType<typeof world>>) =>
  (await w.garden.getShoot('dev', 'api1'))?.status.advertisedAddresses;

async function world(
  options: {
    failStart?: boolean;
    ownershipTimings?: Partial<OwnershipTimings>;
    failNotices?: boolean;
    /** A single-member shoot (the builder's is highly available). */
    singleMember?: boolean;
  } = {},
) {
  const clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
  const garden = new MemoryGardenRepository({ clock });
  const gardenService = new GardenService({
    repository: garden,
    clock,
    provisioner: {
      provision: async (n) => ({ commandQueueUrl: `https://sqs.local/000000000000/gl-seed-${n}.fifo` }),
      deprovision: async () => {},
    },
  });
  for (const [i, name] of ['src', 'dst'].entries()) {
    await gardenService.putSeed(
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
    await gardenService.heartbeat(name, READY);
  }
  await gardenService.putShoot(
    'dev',
    'api1',
    shootBody({ spec: { seedName: 'src', ...(options.singleMember ? { controlPlane: {} } : {}) } }),
  );
  await createAnswered(garden, 'dev', 'api1', clock.now());
  const owners = new InMemoryOwnerRecords();
  const srcIdentity = (await garden.getSeed('src'))!.status.identity;
  await owners.set({ name: RECORD, value: srcIdentity });
  const buckets = new Map([['gl-backup-src', new InMemorySnapshotStore()]]);
  const started: MigrationExecutionInput[] = [];
  const names: string[] = [];
  /** Executions that ended (failed, stopped) without their migration recording it. */
  const ended = new Set<string>();
  const events: string[] = [];
  const notices: {
    command: SeedNotice;
    queueUrl: string;
    messageGroupId: string;
    recordThen: string | null;
  }[] = [];
  const shootStates = new InMemoryShootStateStore();
  const keys = new LocalDataKeys();
  const secrets = new ShootSecretsKeeper({ store: shootStates, keys, generate: secretsOnce, now: () => clock.now() });
  const journal = new MigrationJournal({
    garden,
    migrations: new MemoryMigrationStore(),
    clock,
    events: { publish: async (t) => void events.push(t) },
  });
  const apiRecords = new InMemoryApiRecords(() => clock.now().getTime());
  await apiRecords.set({ name: API, target: { type: 'A', value: '10.0.0.1' } });
  const waits = new MemorySourceWaitIndex();
  const roles = {
    admission: new MigrationAdmission({
      journal,
      workflow: {
        start: async ({ name, input }) => {
          if (options.failStart) throw new Error('states unavailable');
          started.push(input);
          names.push(name);
        },
        ended: async (name) => ended.has(name),
      },
      heartbeatIntervalMs: 10_000,
      ...(options.ownershipTimings ? { ownershipTimings: options.ownershipTimings } : {}),
    }),
    paths: new PathSteps({ journal, heartbeatIntervalMs: 10_000 }),
    seedCommands: new SeedCommands({ journal, shootStates, stateBucket: 'state', secrets, sourceWaits: waits }),
    seedAnswers: new SeedAnswers({ journal, shootStates, sourceWaits: waits }),
    ownerSteps: new OwnerSteps({
      journal,
      owners,
      internalDomain: DOMAIN,
      notices: {
        send: async (input) => {
          if (options.failNotices) throw new Error('queue unavailable');
          // What the record says when the notice leaves: the change must already be made.
          notices.push({ ...input, recordThen: (await owners.get(RECORD))?.value ?? null });
        },
      },
    }),
    finalSnapshot: new FinalSnapshotWait({
      journal,
      snapshots: (bucket) => buckets.get(bucket) ?? new InMemorySnapshotStore(),
      waitFinalSnapshotMs: 60_000,
      lookForMs: 0,
    }),
    copy: new CopySteps({ journal }),
    preCopy: new PreCopySteps(journal),
    apiRecord: new ApiRecordSteps({
      journal,
      writer: new ApiRecordWriter({
        records: apiRecords,
        settings: { externalDomain: 'shoots.gardenless.test', ttlSeconds: 30 },
        events: journal.events,
      }),
      notices: {
        send: async (input) => {
          if (options.failNotices) throw new Error('queue unavailable');
          notices.push({ ...input, recordThen: (await apiRecords.get(API))?.value ?? null });
        },
      },
    }),
    finalize: new FinalizeSteps(journal),
  };
  return {
    garden,
    gardenService,
    journal,
    waits,
    ...roles,
    notices,
    names,
    ended,
    owners,
    apiRecords,
    clock,
    started,
    events,
    shootStates,
    keys,
    secrets,
    source: buckets.get('gl-backup-src')!,
    srcIdentity,
  };
}

let generated: ShootSecrets | undefined;
/** One shoot's secrets for the whole file: generating them is the slow part of a test's world. */
async function secretsOnce(now: Date): Promise<ShootSecrets> {
  generated ??= await generateShootSecrets(now);
  return generated;
}

/** The migrate answer a source agent gives, through the protocol helpers. */
async function migrateAnswer(w: Awaited<ReturnType<typeof world>>, ref: MigrationRef) {
  const { command } = await w.seedCommands.beginCommand(ref, 'migrate-extensions');
  if (command.type !== 'migrate') throw new Error('expected a migrate command');
  return commandSuccess(
    command,
    {
      extensions: [{ kind: 'Infrastructure', name: 'api1', action: 'migrate' }],
      shootState: {
        apiVersion: 'core.gardenless.io/v1',
        kind: 'ShootState',
        shoot: command.shoot,
        collectedAt: w.clock.now().toISOString(),
        collectedAfter: 'migrate',
        extensions: [{ kind: 'Infrastructure', name: 'api1', state: { inline: { vpc: 'vpc-1' } } }],
      },
    },
    w.clock.now(),
  );
}

/** A bad-path migration to dst past choose-path, its pre-copy's copy recorded: the restore ahead comes next. */
/** A live migration of a single-member shoot up to its survey; the source's heartbeat says where its etcd serves. */
async function livePersisted() {
  const w = await world({ singleMember: true });
  await w.gardenService.heartbeat('src', {
    ...READY,
    controlPlanes: [{ technicalID: 'shoot--dev--api1', active: true, etcdClientUrl: 'http://127.0.0.1:2379' }],
  });
  await w.admission.start('dev', 'api1', { destinationSeed: 'dst', mode: 'live' });
  const ref = w.started[0]!.ref;
  await w.paths.choosePath(ref);
  await w.seedAnswers.persistShootState(ref, await migrateAnswer(w, ref));
  return { w, ref };
}

async function preCopied(w: Awaited<ReturnType<typeof world>>, output: PreCopyOutput): Promise<MigrationRef> {
  await w.admission.start('dev', 'api1', { destinationSeed: 'dst', mode: 'bad' });
  const ref = w.started[0]!.ref;
  await w.paths.choosePath(ref);
  await w.preCopy.beginPreCopy(ref);
  await w.preCopy.completePreCopy(ref, output);
  return ref;
}

/** A bad-path migration to dst started, its path chosen and its pre-copy run (`preCopy`). */
async function badPathPreCopied(
  w: Awaited<ReturnType<typeof world>>,
  options: { ahead?: boolean } = {},
): Promise<MigrationRef> {
  await w.admission.start('dev', 'api1', { destinationSeed: 'dst', mode: 'bad' });
  const ref = w.started[0]!.ref;
  await w.paths.choosePath(ref);
  await preCopy(w, ref, options);
  return ref;
}

/**
 * The pre-copy as the state machine runs it after choose-path: the copy's summary recorded, then the
 * destination's answer to the restore ahead (restored ahead, or declined). Returns the ahead command.
 */
async function preCopy(w: Awaited<ReturnType<typeof world>>, ref: MigrationRef, options: { ahead?: boolean } = {}) {
  await w.preCopy.beginPreCopy(ref);
  await w.preCopy.completePreCopy(ref, { copied: 3, skipped: 0, bytes: 512_000_000, lastRevision: 90 });
  const { command } = await w.seedCommands.beginCommand(ref, 'restore-etcd-ahead');
  const ahead = options.ahead ?? true;
  await w.seedAnswers.completeCommand(
    ref,
    'restore-etcd-ahead',
    commandSuccess(
      command as never,
      { etcd: { restoredRevision: ahead ? 90 : 0, snapshots: ahead ? 3 : 0, final: false, ahead } } as never,
      w.clock.now(),
    ),
  );
  return command;
}

async function answer(
  w: Awaited<ReturnType<typeof world>>,
  ref: MigrationRef,
  step: 'delete-source-control-plane' | 'restore-etcd' | 'restore-extensions',
) {
  const { command } = await w.seedCommands.beginCommand(ref, step);
  const result =
    command.type === 'delete-control-plane'
      ? { deleted: true, extensionsDropped: 1 }
      : step === 'restore-etcd'
        ? { etcd: { restoredRevision: 101, snapshots: 2, final: true } }
        : { extensions: [] };
  return w.seedAnswers.completeCommand(ref, step, commandSuccess(command as never, result as never, w.clock.now()));
}

describe('owner-change notices', () => {
  it('tells the source to check at once after the good path deletes the record, and not again once its control plane is gone', async () => {
    // Prepare
    const w = await world();
    await w.admission.start('dev', 'api1', { destinationSeed: 'dst' });
    const ref = w.started[0]!.ref;
    await w.paths.choosePath(ref);
    await preCopy(w, ref);
    await w.seedAnswers.persistShootState(ref, await migrateAnswer(w, ref));

    // Act
    const deleted = await w.ownerSteps.deleteOwnerRecord(ref);
    const final = makeSnapshot({
      technicalID: 'shoot--dev--api1',
      kind: 'Full',
      startRevision: 0,
      lastRevision: 101,
      createdOn: Math.floor(w.clock.now().getTime() / 1000),
      compressionSuffix: '',
      final: true,
    });
    await w.source.put(final.key, new Uint8Array([1]));
    await w.finalSnapshot.waitFinalSnapshot(ref);
    await answer(w, ref, 'delete-source-control-plane');
    const set = await w.ownerSteps.setOwnerDestination(ref);

    // Assess: one notice, after the change, on the source's queue in its own message group, never answered.
    expect(deleted).toMatchObject({
      notice: { sent: true, commandId: `${ref.migrationId}/delete-owner-record/check-owner` },
    });
    expect(w.notices.filter((n) => n.command.type === 'check-owner')).toHaveLength(1);
    expect(w.notices[0]).toMatchObject({
      queueUrl: 'https://sqs.local/000000000000/gl-seed-src.fifo',
      messageGroupId: 'shoot--dev--api1.owner-notice',
      recordThen: null,
    });
    expect(w.notices[0]!.command).toMatchObject({
      type: 'check-owner',
      change: 'deleted',
      seed: 'src',
      migrationId: ref.migrationId,
    });
    expect(w.notices[0]!.command.taskToken).toBeUndefined();
    expect(set.notice).toEqual({ sent: false, reason: 'the source control plane is deleted already' });
    const steps = (await w.journal.current(ref)).steps;
    expect(steps.find((s) => s.id === 'delete-owner-record')?.message).toBe(
      'deleted owner.api1.dev.internal.gardenless.test; source told to check now',
    );
  });

  it('tells the source after the bad path sets the record to the destination', async () => {
    const w = await world();
    const ref = await badPathPreCopied(w);
    await w.ownerSteps.setOwnerDestination(ref);
    const dstIdentity = (await w.garden.getSeed('dst'))!.status.identity;
    expect(
      w.notices.map((n) => [n.command.type === 'check-owner' && n.command.change, n.command.seed, n.recordThen]),
    ).toEqual([['set', 'src', dstIdentity]]);
  });

  it('changes the record and completes the step when the notice cannot be sent', async () => {
    const w = await world({ failNotices: true });
    const ref = await badPathPreCopied(w);
    const set = await w.ownerSteps.setOwnerDestination(ref);
    expect(set.notice).toEqual({ sent: false, reason: 'sending failed: queue unavailable' });
    expect((await w.owners.get(RECORD))?.value).toBe((await w.garden.getSeed('dst'))!.status.identity);
  });
});

describe("the API record's TTL during a migration", () => {
  it("lowers it after choose-path, waits out the old TTL before the pre-copy, fences only once it ran out, and the switch writes the deployment's back", async () => {
    // Prepare: the record names the source with the default TTL (the deployment's is 30 s).
    const w = await world();
    await w.admission.start('dev', 'api1', { destinationSeed: 'dst' });
    const ref = w.started[0]!.ref;
    await w.paths.choosePath(ref);
    const loweredAt = w.clock.now().getTime();

    // Act 1: lowered, and lowered again by a retried Lambda.
    const lowered = await w.apiRecord.lowerTtl(ref);
    w.clock.advance(2_000);
    const again = await w.apiRecord.lowerTtl(ref);

    // Assess 1: same target, the migration's TTL; the migration remembers the old TTL and when its answers
    // run out, and the good path is told to wait until then before its pre-copy.
    const cachedUntil = new Date(loweredAt + DEFAULT_API_RECORD_TTL_SECONDS * 1000).toISOString();
    expect(lowered).toEqual({
      ttl: MIGRATION_API_RECORD_TTL_SECONDS,
      cachedUntil,
      waitSeconds: DEFAULT_API_RECORD_TTL_SECONDS,
    });
    expect(again).toEqual({ ...lowered, waitSeconds: DEFAULT_API_RECORD_TTL_SECONDS - 2 });
    expect(await w.apiRecords.get(API)).toEqual({
      name: API,
      type: 'A',
      value: '10.0.0.1',
      ttl: MIGRATION_API_RECORD_TTL_SECONDS,
    });
    expect((await w.journal.current(ref)).apiRecordTtl).toEqual({
      from: DEFAULT_API_RECORD_TTL_SECONDS,
      to: MIGRATION_API_RECORD_TTL_SECONDS,
      cachedUntil,
    });
    expect(w.events).not.toContain('ApiRecordChanged');

    // Act 2: the good path reaches the fence 20 s after the lowering (a state machine that did not wait).
    await preCopy(w, ref);
    await w.seedAnswers.persistShootState(ref, await migrateAnswer(w, ref));
    w.clock.advance(18_000);
    const early = await w.ownerSteps.deleteOwnerRecord(ref);

    // Assess 2: nothing changed yet, and the step says why it waits: until the old TTL ran out after the lowering.
    const left = DEFAULT_API_RECORD_TTL_SECONDS - 20;
    expect(early).toEqual({ waitSeconds: left });
    expect(await w.owners.get(RECORD)).toBeDefined();
    expect((await w.journal.current(ref)).steps.find((s) => s.id === 'delete-owner-record')).toMatchObject({
      state: 'running',
      message: expect.stringContaining(`waiting ${left} s`),
    });
    w.clock.advance(left * 1000 - 1);
    expect(await w.ownerSteps.deleteOwnerRecord(ref)).toEqual({ waitSeconds: 1 });
    w.clock.advance(1);
    expect(await w.ownerSteps.deleteOwnerRecord(ref)).toMatchObject({ hibernated: false });
    expect(await w.owners.get(RECORD)).toBeUndefined();

    // Act 3: the rest of the good path; the destination serves.
    const final = makeSnapshot({
      technicalID: 'shoot--dev--api1',
      kind: 'Full',
      startRevision: 0,
      lastRevision: 101,
      createdOn: Math.floor(w.clock.now().getTime() / 1000),
      compressionSuffix: '',
      final: true,
    });
    await w.source.put(final.key, new Uint8Array([1]));
    await w.finalSnapshot.waitFinalSnapshot(ref);
    await w.gardenService.heartbeat('src', READY);
    await answer(w, ref, 'delete-source-control-plane');
    await w.ownerSteps.setOwnerDestination(ref);
    await w.copy.beginCopy(ref);
    await w.copy.completeCopy(ref, { copied: 1, skipped: 0, bytes: 1, finalFound: true, lastRevision: 101 });
    await answer(w, ref, 'restore-etcd');
    await answer(w, ref, 'restore-extensions');
    w.clock.advance(1_000);
    await w.gardenService.heartbeat('dst', serving('lb-dst.example.com'));
    await w.apiRecord.switchApiRecord(ref);

    // Assess 3: the destination with the deployment's TTL.
    expect(await w.apiRecords.get(API)).toEqual({ name: API, type: 'CNAME', value: 'lb-dst.example.com', ttl: 30 });
  });

  it("leaves a record with a TTL no longer than the lowered one, and a hibernated shoot's, as it is: nothing to wait for", async () => {
    const w = await world();
    await w.apiRecords.set({
      name: API,
      target: { type: 'A', value: '10.0.0.1' },
      ttl: MIGRATION_API_RECORD_TTL_SECONDS,
    });
    await w.admission.start('dev', 'api1', { destinationSeed: 'dst' });
    const ref = w.started[0]!.ref;
    await w.paths.choosePath(ref);

    expect(await w.apiRecord.lowerTtl(ref)).toEqual({ ttl: MIGRATION_API_RECORD_TTL_SECONDS, cachedUntil: null });
    expect((await w.journal.current(ref)).apiRecordTtl).toBeUndefined();
    await preCopy(w, ref);
    await w.seedAnswers.persistShootState(ref, await migrateAnswer(w, ref));
    expect(await w.ownerSteps.deleteOwnerRecord(ref)).toMatchObject({ hibernated: false });
  });

  it("a switch that finds the record on the destination already gives it the deployment's TTL again", async () => {
    // Prepare: a retried switch, after the record was written with the lowered TTL by hand.
    const w = await world();
    await w.admission.start('dev', 'api1', { destinationSeed: 'dst', mode: 'bad' });
    const ref = w.started[0]!.ref;
    await w.paths.choosePath(ref);
    // The bad path lowers the TTL too, and never waits.
    expect(await w.apiRecord.lowerTtl(ref)).not.toHaveProperty('waitSeconds');
    await preCopy(w, ref);
    await w.ownerSteps.setOwnerDestination(ref);
    await w.copy.beginCopy(ref);
    await w.copy.completeCopy(ref, { copied: 1, skipped: 0, bytes: 1, finalFound: false, lastRevision: 7 });
    await answer(w, ref, 'restore-etcd');
    await answer(w, ref, 'restore-extensions');
    await w.apiRecords.set({
      name: API,
      target: { type: 'A', value: '52.1.0.9' },
      ttl: MIGRATION_API_RECORD_TTL_SECONDS,
    });
    w.clock.advance(1_000);
    await w.gardenService.heartbeat('dst', serving('52.1.0.9'));

    expect(await w.apiRecord.switchApiRecord(ref)).toMatchObject({ changed: false, target: 'A 52.1.0.9' });
    expect(await w.apiRecords.get(API)).toMatchObject({ value: '52.1.0.9', ttl: 30 });
  });
});

describe('the pre-copy', () => {
  const stepIn = async (w: Awaited<ReturnType<typeof world>>, id: string) =>
    (await w.admission.get('dev', 'api1')).steps.find((s) => s.id === id);

  it('a copy that fails is recorded with its reason, the restore ahead skipped, and the good path goes on', async () => {
    // Prepare
    const w = await world();
    await w.admission.start('dev', 'api1', { destinationSeed: 'dst' });
    const ref = w.started[0]!.ref;
    await w.paths.choosePath(ref);
    await w.preCopy.beginPreCopy(ref);

    // Act: what the state machine's PreCopyFailed state passes on from the copy child's failure.
    const gaveUp = await w.preCopy.continueWithout(ref, {
      Error: 'EmptySource',
      Cause: JSON.stringify({ errorMessage: 'source bucket gl-backup-src holds no snapshot' }),
    });
    const again = await w.preCopy.continueWithout(ref, { Error: 'EmptySource' });

    // Assess
    expect(gaveUp).toEqual({
      step: 'pre-copy-snapshots',
      message: expect.stringMatching(
        /^EmptySource: source bucket gl-backup-src holds no snapshot; continuing without it: copy-snapshots copies everything/,
      ),
    });
    expect(again).toEqual({ step: null, message: null });
    expect(await stepIn(w, 'restore-etcd-ahead')).toMatchObject({ state: 'skipped' });
    expect((await w.admission.get('dev', 'api1')).state).toBe('Running');
    expect((await w.paths.choosePath(ref)).preCopyFrom).toBe('none');
    await w.seedAnswers.persistShootState(ref, await migrateAnswer(w, ref));
    expect((await w.admission.get('dev', 'api1')).preCopy).toBeUndefined();
    expect(w.events).toEqual(['MigrationStarted']);
  });

  it("the restore ahead's second round is the same command under an id of its own; the step records where the standby got to", async () => {
    // Prepare: the first round sent.
    const w = await world();
    const ref = await preCopied(w, { copied: 3, skipped: 0, bytes: 512_000_000, lastRevision: 90 });
    const { command: first } = await w.seedCommands.beginCommand(ref, 'restore-etcd-ahead');

    // Act: the state machine sends the refresh after the second pre-copy, and records its answer.
    const { command: refresh } = await w.seedCommands.beginCommand(ref, 'restore-etcd-ahead', { round: 'refresh' });
    const recorded = await w.seedAnswers.completeCommand(
      ref,
      'restore-etcd-ahead',
      commandSuccess(
        refresh as never,
        { etcd: { restoredRevision: 130, snapshots: 5, final: false, ahead: true, aheadRevision: 90 } } as never,
        w.clock.now(),
      ),
    );

    // Assess
    expect(first.commandId).toBe(`${ref.migrationId}/restore-etcd-ahead`);
    expect(refresh.commandId).toBe(`${ref.migrationId}/restore-etcd-ahead/refresh`);
    // Each round seals the shoot's secrets for the destination anew (its kube-apiserver starts on the standby).
    const unsealed = (c: typeof first) => ({ ...c, secrets: undefined });
    expect({ ...unsealed(refresh), commandId: first.commandId, issuedAt: first.issuedAt }).toEqual(unsealed(first));
    for (const round of [first, refresh])
      expect(round).toMatchObject({ secrets: { context: { 'gardenless:seed': 'dst' } } });
    expect(recorded.message).toBe(
      'etcd restored ahead to revision 90, refreshed to revision 130 from 5 snapshots (not serving)',
    );
    expect(await stepIn(w, 'restore-etcd-ahead')).toMatchObject({ state: 'succeeded', attempts: 1 });
    expect((await w.admission.get('dev', 'api1')).preCopy).toMatchObject({ lastRevision: 90, aheadRevision: 130 });
    // Only the restore ahead has a second round.
    await expect(w.seedCommands.beginCommand(ref, 'migrate-extensions', { round: 'refresh' })).rejects.toThrow(
      /has no round refresh/,
    );
  });

  it('a destination that never answers the restore ahead costs the step its heartbeat bound, and the flow goes on', async () => {
    const w = await world();
    const ref = await preCopied(w, { copied: 1, skipped: 2, bytes: 1_500_000, lastRevision: 40 });
    await w.seedCommands.beginCommand(ref, 'restore-etcd-ahead');

    await w.preCopy.continueWithout(ref, { Error: 'States.HeartbeatTimeout', Cause: '' });

    expect(await stepIn(w, 'pre-copy-snapshots')).toMatchObject({
      state: 'succeeded',
      message: 'pre-copied 1 objects, 1.5 MB, up to revision 40 (2 intact there already)',
    });
    expect(await stepIn(w, 'restore-etcd-ahead')).toMatchObject({
      state: 'failed',
      message:
        'States.HeartbeatTimeout; continuing without it: restore-etcd restores etcd in full after the owner change',
    });
    expect((await w.admission.get('dev', 'api1')).preCopy).toEqual({
      copied: 1,
      skipped: 2,
      bytes: 1_500_000,
      lastRevision: 40,
    });
    expect((await w.ownerSteps.setOwnerDestination(ref)).ownerChangedAt).toBeGreaterThan(0);
  });

  it("the owner change hands the source's connections over ahead to the load balancer the destination's standby reports; none without one", async () => {
    // Prepare: a bad-path migration whose destination restored ahead; at first its heartbeat names no load balancer.
    const w = await world();
    const ref = await badPathPreCopied(w);
    await w.gardenService.heartbeat('dst', {
      ...READY,
      controlPlanes: [{ technicalID: 'shoot--dev--api1', active: false }],
    });

    // Act 1, Assess 1: nothing to hand over to yet.
    await w.ownerSteps.setOwnerDestination(ref);
    expect(await w.apiRecord.handOverAhead(ref)).toEqual({
      sent: false,
      reason: 'seed dst reports no load balancer for the shoot yet',
    });

    // Act 2: the standby's kube-apiserver runs behind the destination's load balancer (not active: it serves no one).
    await w.gardenService.heartbeat('dst', {
      ...READY,
      controlPlanes: [
        { technicalID: 'shoot--dev--api1', active: false, externalUrl: 'https://lb-dst.example.com:443' },
      ],
    });
    const outcome = await w.apiRecord.handOverAhead(ref);

    // Assess 2: the source's load balancer passes connections on from now, under the owner change's own id, for at most HAND_OVER_AHEAD_MS.
    expect(outcome).toEqual({ sent: true, commandId: `${ref.migrationId}/set-owner-destination/hand-over` });
    expect(w.notices.filter((n) => n.command.type === 'hand-over')).toEqual([
      expect.objectContaining({
        queueUrl: 'https://sqs.local/000000000000/gl-seed-src.fifo',
        command: expect.objectContaining({
          type: 'hand-over',
          seed: 'src',
          apiDomain: API,
          target: 'https://lb-dst.example.com:443',
          until: new Date(w.clock.now().getTime() + HAND_OVER_AHEAD_MS).toISOString(),
        }),
      }),
    ]);
  });

  it("own-live hands the source's connections over to the load balancer the survey named; none without one", async () => {
    // Prepare: a live migration up to its survey; the source's heartbeat says where its etcd serves.
    const { w, ref } = await livePersisted();
    const survey = async (loadBalancer?: string) => {
      const { command } = await w.seedCommands.beginCommand(ref, 'survey-live');
      // The survey starts nothing, but carries the destination's copy of the secrets: whether its member can
      // speak to the source's depends on the etcd peer CA it will have.
      expect((command as { secrets?: { context: unknown } }).secrets?.context).toEqual(
        seedContext(command.shoot.technicalID, 'dst'),
      );
      const spec = {
        cluster: 'cdf818194e3a8c32',
        sourceMembers: [{ name: 'etcd-src', peerUrl: 'http://127.0.0.1:2380', clientUrl: 'http://127.0.0.1:2379' }],
      };
      const result = { spec, next: 'own-both', taken: [], ...(loadBalancer ? { loadBalancer } : {}) };
      await w.seedAnswers.completeCommand(
        ref,
        'survey-live',
        commandSuccess(command as never, result as never, w.clock.now()),
      );
    };

    // Act 1, Assess 1: a destination without a load balancer of its own answers none; nothing is handed over.
    await survey();
    await w.ownerSteps.setOwnerLive(ref);
    expect(await w.apiRecord.handOverAhead(ref, 'own-live')).toEqual({
      sent: false,
      reason: 'seed dst reports no load balancer for the shoot yet',
    });

    // Act 2: the survey answered again (a retried step) names the destination's load balancer.
    await survey('https://127.0.0.2:8443');
    const outcome = await w.apiRecord.handOverAhead(ref, 'own-live');

    // Assess 2: passed on from now, under own-live's own id, before the destination reports any kube-apiserver.
    expect(outcome).toEqual({ sent: true, commandId: `${ref.migrationId}/own-live/hand-over` });
    expect(w.notices.filter((n) => n.command.type === 'hand-over')).toEqual([
      expect.objectContaining({
        command: expect.objectContaining({
          seed: 'src',
          apiDomain: API,
          target: 'https://127.0.0.2:8443',
          until: new Date(w.clock.now().getTime() + HAND_OVER_AHEAD_MS).toISOString(),
        }),
      }),
    ]);
    // The walk starts kube-apiserver on the destination's member: its round carries the secrets, sealed for it.
    const { command: walk } = await w.seedCommands.beginCommand(ref, 'walk-live');
    expect(walk).toMatchObject({ secrets: { context: { 'gardenless:seed': 'dst' } } });
  });

  /** A live migration whose walk began (owner record at the live value) and whose walk-live round runs. */
  async function walking() {
    const { w, ref } = await livePersisted();
    const { command } = await w.seedCommands.beginCommand(ref, 'survey-live');
    const spec = {
      cluster: 'cdf818194e3a8c32',
      sourceMembers: [{ name: 'etcd', peerUrl: 'https://127.0.0.1:2380', clientUrl: 'http://127.0.0.1:2379' }],
    };
    await w.seedAnswers.completeCommand(
      ref,
      'survey-live',
      commandSuccess(command as never, { spec, next: 'own-both', taken: [] } as never, w.clock.now()),
    );
    await w.ownerSteps.setOwnerLive(ref);
    await w.seedCommands.beginCommand(ref, 'walk-live');
    /** The source's agent falls silent: its lease runs out while the destination's goes on. */
    const loseSource = async () => {
      w.clock.advance(31_000);
      await w.gardenService.heartbeat('dst', READY);
    };
    const round = async (result: object) => {
      const { command: lost } = await w.seedCommands.beginCommand(ref, 'walk-live', { round: 'source-lost' });
      expect(lost).toMatchObject({ commandId: `${ref.migrationId}/walk-live/source-lost`, lost: 'source' });
      return w.seedAnswers.completeCommand(
        ref,
        'walk-live',
        commandSuccess(lost as never, { spec, taken: [], ...result } as never, w.clock.now()),
      );
    };
    return { w, ref, spec, loseSource, round };
  }

  it('a walk round that fails while both seeds hold their leases is taken again, a bounded number of times', async () => {
    const { w, ref } = await walking();
    const failure = { Error: 'LiveWalkPeerLost', Cause: "the source's members etcd have not answered for 10000 ms" };
    expect(await w.paths.liveReach(ref, failure)).toEqual({ next: 'walk-again', waitSeconds: LIVE_WALK_RETRY_SECONDS });
    for (let i = 1; i < LIVE_WALK_ATTEMPTS; i++) await w.paths.liveReach(ref, failure);
    // A round that ran out of time while both seeds answer is no lost seed: Error at once, as before.
    await expect(w.paths.liveReach(ref, { Error: 'States.Timeout' })).rejects.toThrow(
      expect.objectContaining({ code: 'LiveWalkStalled' }),
    );
    await expect(w.paths.liveReach(ref, failure)).rejects.toThrow(
      expect.objectContaining({
        code: 'LiveWalkStalled',
        message: expect.stringMatching(/both seeds hold their leases/),
      }),
    );
  });

  it('a source lost while the destination only learnt: its member is wiped, then the bad path from the live value', async () => {
    // Prepare
    const { w, ref, loseSource, round } = await walking();
    await loseSource();

    // Act
    const reach = await w.paths.liveReach(ref, { Error: 'LiveWalkPeerLost', Cause: 'silent' });
    const answered = await round({ next: 'bad-path', wayOut: 'bad-path', taken: ['wipe etcd-dst-identity'] });
    await w.paths.switchToBadPath(ref, { Error: 'LiveWalkPeerLost', Cause: 'silent' });
    await w.ownerSteps.setOwnerDestination(ref);

    // Assess: the walk-live step fails where the flow switched, the live steps after it are skipped, and the
    // owner record goes from the live value to the destination, which fences whatever of the source still runs.
    expect(reach).toEqual({ next: 'source-lost' });
    expect(answered).toMatchObject({ next: 'bad-path', message: expect.stringMatching(/only learnt and was wiped/) });
    const record = await w.admission.get('dev', 'api1');
    expect(record).toMatchObject({ path: 'bad', live: { wayOut: 'bad-path' } });
    expect(record.steps.find((s) => s.id === 'walk-live')).toMatchObject({
      state: 'failed',
      message: expect.stringMatching(/switched to the bad path/),
    });
    expect(record.steps.filter((s) => ['finish-live', 'retire-source'].includes(s.id)).map((s) => s.state)).toEqual([
      'skipped',
      'skipped',
    ]);
    expect((await w.owners.get(RECORD))?.value).toBe(record.destination.identity);
    expect(resumePoint(await w.admission.get('dev', 'api1'))).toBe('copy-snapshots');
  });

  it('a source lost while both vote: the owner record goes to the destination, and retire-source is skipped', async () => {
    // Prepare
    const { w, ref, spec, loseSource, round } = await walking();
    await loseSource();
    await w.paths.liveReach(ref, { Error: 'LiveWalkPeerLost', Cause: 'silent' });

    // Act
    const answered = await round({ next: 'own-destination', wayOut: 'force' });
    const owner = await w.ownerSteps.setOwnerDestination(ref);
    const { command: finish } = await w.seedCommands.beginCommand(ref, 'finish-live');
    const finished = { spec, next: 'retire-source', taken: ['force etcd-dst'] };
    await w.seedAnswers.completeCommand(
      ref,
      'finish-live',
      commandSuccess(finish as never, finished as never, w.clock.now()),
    );
    const retire = w.seedCommands.beginCommand(ref, 'retire-source');

    // Assess
    expect(answered).toMatchObject({
      next: 'own-destination',
      message: expect.stringMatching(/^the source is lost; way out: the voters are split/),
    });
    expect(owner.path).toBe('live');
    await expect(retire).rejects.toThrow(expect.objectContaining({ name: 'SourceLeaseExpiredError' }));
    await w.paths.skipRetireSource(ref, {
      Error: 'SourceLeaseExpired',
      Cause: 'no agent there would answer retire-source',
    });
    const record = await w.admission.get('dev', 'api1');
    expect(record.live?.wayOut).toBe('force');
    expect(record.steps.find((s) => s.id === 'retire-source')).toMatchObject({
      state: 'failed',
      message: expect.stringMatching(/continuing without it: the source's agent deletes what is left once it is back/),
    });
    expect(resumePoint(record)).toBe('restore-extensions');
  });

  it('both seeds lost mid-walk: the walk holds where it stands, Error, to resume once one is back', async () => {
    const { w, ref } = await walking();
    w.clock.advance(31_000);
    await expect(w.paths.liveReach(ref, { Error: 'States.Timeout' })).rejects.toThrow(
      expect.objectContaining({
        code: 'LiveWalkHeld',
        message: expect.stringMatching(/the leases of both seeds expired/),
      }),
    );
  });

  it('a destination lost while both vote: the record goes back to the source, whose member is forced, and a resume walks afresh', async () => {
    // Prepare
    const { w, ref, spec } = await walking();
    w.clock.advance(31_000);
    await w.gardenService.heartbeat('src', READY);
    const sourceRound = async (round: 'destination-lost' | 'walk-back', result: object) => {
      const { command } = await w.seedCommands.beginCommand(ref, 'walk-live', { round });
      return {
        command,
        answered: await w.seedAnswers.completeCommand(
          ref,
          'walk-live',
          commandSuccess(command as never, { spec, taken: [], ...result } as never, w.clock.now()),
        ),
      };
    };
    const live = (await w.owners.get(RECORD))?.value;

    // Act
    const reach = await w.paths.liveReach(ref, { Error: 'States.Timeout' });
    const decided = await sourceRound('destination-lost', { next: 'own-source', wayOut: 'force' });
    const owner = await w.ownerSteps.setOwnerSource(ref);
    // A retried Lambda finds the record back already.
    expect(await w.ownerSteps.setOwnerSource(ref)).toEqual(owner);
    const back = await sourceRound('walk-back', { next: 'done', wayOut: 'force', taken: ['force etcd'] });
    await w.finalize.fail(ref, { Error: 'LiveWalkWalkedBack', Cause: back.answered.message });

    // Assess: both rounds go to the source, told the destination is lost, under the record as the garden wrote it.
    expect(reach).toEqual({ next: 'destination-lost' });
    expect(decided.command).toMatchObject({
      seed: 'src',
      commandId: `${ref.migrationId}/walk-live/destination-lost`,
      lost: 'destination',
      owner: live,
    });
    expect(decided.answered).toMatchObject({
      next: 'own-source',
      message: expect.stringMatching(
        /^the destination is lost; way out: the voters are split .* goes back to the source/,
      ),
    });
    const source = (await w.admission.get('dev', 'api1')).source.identity;
    expect(owner).toEqual({ value: source });
    expect((await w.owners.get(RECORD))?.value).toBe(source);
    expect(back.command).toMatchObject({ seed: 'src', lost: 'destination', owner: source });
    const record = await w.admission.get('dev', 'api1');
    expect(record).toMatchObject({ state: 'Error', path: 'live', error: { step: 'walk-live' } });
    expect(record.error?.message).toMatch(/^LiveWalkWalkedBack: the destination is lost/);
    expect(record.live).toBeUndefined();
    expect(record.steps.filter((s) => s.id.endsWith('-live')).map((s) => [s.id, s.state])).toEqual([
      ['survey-live', 'pending'],
      ['own-live', 'pending'],
      ['walk-live', 'failed'],
      ['finish-live', 'pending'],
    ]);
    // Resumed once the destination is back, the walk begins afresh: a new survey, the record to a new live value.
    await w.gardenService.heartbeat('dst', READY);
    await w.admission.start('dev', 'api1', {});
    expect(resumePoint(await w.admission.get('dev', 'api1'))).toBe('survey-live');
  });

  it("the walk's round is filed under the destination: the lease monitor cuts it short once the destination's lease expired", async () => {
    const { w, ref } = await walking();
    await w.seedCommands.beginCommand(ref, 'walk-live', { taskToken: 'walk-token' });
    const failed: { taskToken: string; error: string; cause: string }[] = [];
    const monitor = new SourceLeaseSwitch({
      waits: w.waits,
      migrations: w.journal.migrations,
      tasks: { fail: async (f) => (failed.push(f), 'failed') },
    });
    // The source's lease expiring cuts nothing short: the destination's round tells when the source falls silent.
    w.clock.advance(31_000);
    await w.gardenService.heartbeat('dst', READY);
    const src = expiredLease((await w.garden.getSeed('src'))!, w.clock.now())!;
    expect(await monitor.failWaitsOn(src)).toEqual([]);
    w.clock.advance(31_000);
    const dst = expiredLease((await w.garden.getSeed('dst'))!, w.clock.now())!;

    const outcome = await monitor.failWaitsOn(dst);

    expect(outcome).toMatchObject([{ step: 'walk-live', outcome: 'failed' }]);
    expect(failed).toEqual([
      {
        taskToken: 'walk-token',
        error: 'DestinationLeaseExpired',
        cause: expect.stringMatching(/^the destination seed dst's lease expired .* the live walk takes its way out/),
      },
    ]);
    expect(await w.waits.listForSeed('dst')).toEqual([]);
  });

  it("the walk's round answered, nothing is left filed under the destination", async () => {
    const { w, ref, spec } = await walking();
    const { command } = await w.seedCommands.beginCommand(ref, 'walk-live', { taskToken: 'walk-token' });
    expect((await w.waits.listForSeed('dst')).map((x) => x.step)).toEqual(['walk-live']);
    await w.seedAnswers.completeCommand(
      ref,
      'walk-live',
      commandSuccess(command as never, { spec, next: 'own-destination', taken: [] } as never, w.clock.now()),
    );
    expect(await w.waits.listForSeed('dst')).toEqual([]);
  });

  it('the record goes back to the source only from the live value', async () => {
    const { w, ref } = await walking();
    await w.owners.set({ name: RECORD, value: 'someone-else' });
    await expect(w.ownerSteps.setOwnerSource(ref)).rejects.toThrow(
      expect.objectContaining({ code: 'OwnerRecordUnexpected' }),
    );
  });

  it('a destination lost while the source holds the quorum: the round answers abort-to-source', async () => {
    const { w, ref, spec } = await walking();
    w.clock.advance(31_000);
    await w.gardenService.heartbeat('src', READY);
    await w.paths.liveReach(ref, { Error: 'States.Timeout' });
    const { command } = await w.seedCommands.beginCommand(ref, 'walk-live', { round: 'destination-lost' });
    const answered = await w.seedAnswers.completeCommand(
      ref,
      'walk-live',
      commandSuccess(
        command as never,
        { spec, taken: [], next: 'own-source', wayOut: 'abort-to-source' } as never,
        w.clock.now(),
      ),
    );
    expect(answered).toMatchObject({ message: expect.stringMatching(/the source's voters hold the quorum/) });
    expect(await w.admission.get('dev', 'api1')).toMatchObject({
      state: 'Running',
      live: { wayOut: 'abort-to-source' },
    });
    expect((await w.admission.get('dev', 'api1')).steps.find((s) => s.id === 'walk-live')?.state).toBe('running');
  });

  it('a destination that does not restore ahead declines, the step is skipped, and restore-etcd does all of it', async () => {
    const w = await world();
    const ref = await badPathPreCopied(w, { ahead: false });
    await w.ownerSteps.setOwnerDestination(ref);
    await w.copy.beginCopy(ref);
    await w.copy.completeCopy(ref, { copied: 1, skipped: 3, bytes: 1, finalFound: true, lastRevision: 101 });
    await answer(w, ref, 'restore-etcd');

    expect(await stepIn(w, 'restore-etcd-ahead')).toMatchObject({
      state: 'skipped',
      message: expect.stringMatching(/^the destination does not restore ahead/),
    });
    expect(await stepIn(w, 'restore-etcd')).toMatchObject({
      state: 'succeeded',
      message: 'etcd restored to revision 101 from 2 snapshots (final)',
    });
    expect((await w.admission.get('dev', 'api1')).preCopy?.aheadRevision).toBeUndefined();
  });

  it('tells the state machine where the pre-copy resumes: from the restore ahead once the copy is done, nowhere for a hibernated shoot', async () => {
    const w = await world();
    await w.admission.start('dev', 'api1', { destinationSeed: 'dst' });
    const ref = w.started[0]!.ref;
    expect((await w.paths.choosePath(ref)).preCopyFrom).toBe('pre-copy-snapshots');
    await w.preCopy.beginPreCopy(ref);
    await w.preCopy.completePreCopy(ref, { copied: 3, skipped: 0, bytes: 3, lastRevision: 9 });
    expect((await w.paths.choosePath(ref)).preCopyFrom).toBe('restore-etcd-ahead');

    const h = await world();
    await h.gardenService.putShoot('dev', 'api1', {
      ...(await h.garden.getShoot('dev', 'api1'))!,
      spec: { ...(await h.garden.getShoot('dev', 'api1'))!.spec, hibernation: { enabled: true } },
    });
    await h.admission.start('dev', 'api1', { destinationSeed: 'dst' });
    expect(await h.paths.choosePath(h.started[0]!.ref)).toMatchObject({ hibernated: true, preCopyFrom: 'none' });
  });
});

describe('wait-final-snapshot', () => {
  async function ownerDeleted() {
    const w = await world();
    await w.admission.start('dev', 'api1', { destinationSeed: 'dst' });
    const ref = w.started[0]!.ref;
    await w.paths.choosePath(ref);
    await preCopy(w, ref);
    await w.seedAnswers.persistShootState(ref, await migrateAnswer(w, ref));
    await w.ownerSteps.deleteOwnerRecord(ref);
    const final = makeSnapshot({
      technicalID: 'shoot--dev--api1',
      kind: 'Incr',
      startRevision: 90,
      lastRevision: 101,
      createdOn: Math.floor(w.clock.now().getTime() / 1000),
      compressionSuffix: '',
      final: true,
    });
    return { w, ref, final };
  }

  it('keeps looking within one call: a final snapshot uploaded while it looks is found by that call', async () => {
    // Prepare: the final snapshot arrives after the third pause.
    const { w, ref, final } = await ownerDeleted();
    const sleeps: number[] = [];
    let at = 0;
    const wait = new FinalSnapshotWait({
      journal: w.journal,
      snapshots: () => w.source,
      lookForMs: 20_000,
      lookEveryMs: 250,
      elapsed: () => at,
      sleep: async (ms) => {
        sleeps.push(ms);
        at += ms;
        if (sleeps.length === 3) await w.source.put(final.key, new Uint8Array([1]));
      },
    });

    // Act
    const answer = await wait.waitFinalSnapshot(ref);

    // Assess
    expect(answer).toEqual({ found: true, deadlinePassed: false, snapshot: final.name });
    expect(sleeps).toEqual([250, 250, 250]);
    expect((await w.admission.get('dev', 'api1')).steps.find((s) => s.id === 'wait-final-snapshot')).toMatchObject({
      state: 'succeeded',
      message: `final snapshot ${final.name}`,
    });
  });

  it('answers "not yet" once its while is over, by the clock however slow each listing is', async () => {
    // Prepare: every listing takes 700 ms.
    const { w, ref } = await ownerDeleted();
    let at = 0;
    let lists = 0;
    const slow = {
      ...w.source,
      list: async (id: string) => {
        lists++;
        at += 700;
        return w.source.list(id);
      },
    };
    const wait = new FinalSnapshotWait({
      journal: w.journal,
      snapshots: () => slow as typeof w.source,
      lookForMs: 5_000,
      lookEveryMs: 250,
      elapsed: () => at,
      sleep: async (ms) => void (at += ms),
    });

    // Act
    const answer = await wait.waitFinalSnapshot(ref);

    // Assess: looks until the 5 s are over (the sixth begins at 4,750 ms), so the call ends at most one
    // listing past them.
    expect(answer).toEqual({ found: false, deadlinePassed: false });
    expect(lists).toBe(6);
    expect(at).toBe(5_450);
  });

  it('looks no longer than the wait has left, and then answers that the deadline passed', async () => {
    // Prepare: a 1 s wait for the final snapshot; the pauses advance the journal's clock too.
    const { w, ref } = await ownerDeleted();
    let at = 0;
    const wait = new FinalSnapshotWait({
      journal: w.journal,
      snapshots: () => w.source,
      waitFinalSnapshotMs: 1_000,
      lookForMs: 20_000,
      lookEveryMs: 300,
      elapsed: () => at,
      sleep: async (ms) => {
        at += ms;
        w.clock.advance(ms);
      },
    });

    // Act
    const answer = await wait.waitFinalSnapshot(ref);

    // Assess: pauses of 300, 300, 300 and the last 100 ms, then the bad path's switch.
    expect(answer).toEqual({ found: false, deadlinePassed: true });
    expect(at).toBe(1_000);
  });
});

describe('the migration roles on one migration record', () => {
  it('runs the good path step by step: ShootState persisted, owner record moved, shoot placed on the destination', async () => {
    // Prepare
    const w = await world();
    const started = await w.admission.start('dev', 'api1', { destinationSeed: 'dst' });
    const ref = w.started[0]!.ref;
    expect(started).toMatchObject({ resumed: false, destinationSeed: 'dst', resumeFrom: 'choose-path' });

    // Act
    expect(await w.paths.choosePath(ref)).toEqual({
      path: 'good',
      hibernated: false,
      preCopyFrom: 'pre-copy-snapshots',
    });
    const ahead = await preCopy(w, ref);
    await w.seedAnswers.persistShootState(ref, await migrateAnswer(w, ref));
    await w.ownerSteps.deleteOwnerRecord(ref);
    expect(await w.owners.get(RECORD)).toBeUndefined();
    expect((await w.finalSnapshot.waitFinalSnapshot(ref)).found).toBe(false);
    const final = makeSnapshot({
      technicalID: 'shoot--dev--api1',
      kind: 'Full',
      startRevision: 0,
      lastRevision: 101,
      createdOn: Math.floor(w.clock.now().getTime() / 1000),
      compressionSuffix: '',
      final: true,
    });
    await w.source.put(final.key, new Uint8Array([1]));
    expect((await w.finalSnapshot.waitFinalSnapshot(ref)).found).toBe(true);
    const deletedAt = Date.parse(
      (await w.admission.get('dev', 'api1')).steps.find((s) => s.id === 'delete-owner-record')!.endedAt!,
    );
    w.clock.advance(45_000);
    await w.gardenService.heartbeat('src', READY);
    await answer(w, ref, 'delete-source-control-plane');
    await w.ownerSteps.setOwnerDestination(ref);
    // The copy counts from the owner record's deletion, not from the later change to the destination:
    // a final snapshot taken right after the deletion is this migration's, however long it took.
    expect((await w.copy.beginCopy(ref)).ownerChangedAt).toBe(deletedAt);
    await w.copy.completeCopy(ref, { copied: 1, skipped: 0, bytes: 1, finalFound: true, lastRevision: 101 });
    const { command: restore } = await w.seedCommands.beginCommand(ref, 'restore-etcd');
    await w.seedAnswers.completeCommand(
      ref,
      'restore-etcd',
      commandSuccess(
        restore as never,
        { etcd: { restoredRevision: 101, snapshots: 1, final: true, aheadRevision: 90 } } as never,
        w.clock.now(),
      ),
    );
    await answer(w, ref, 'restore-extensions');
    // The destination restored but has not reported serving: the API record stays on the source.
    await expect(w.apiRecord.switchApiRecord(ref)).rejects.toBeInstanceOf(DestinationNotServingError);
    expect((await w.apiRecords.get(API))?.value).toBe('10.0.0.1');
    expect(await advertised(w)).toBeUndefined();
    w.clock.advance(1_000);
    await w.gardenService.heartbeat('dst', serving('lb-dst.example.com'));
    const before = (await w.apiRecords.get(API))!;
    const cachedUntil = Date.parse((await w.admission.get('dev', 'api1')).apiRecordTtl?.cachedUntil ?? '') || 0;
    expect(await w.apiRecord.switchApiRecord(ref)).toEqual({
      record: API,
      changed: true,
      target: 'CNAME lb-dst.example.com',
    });
    // The source's load balancer is told, once the record names the destination, to pass clients on to it
    // for as long as resolvers may still answer the source.
    const handOver = w.notices.filter((n) => n.command.type === 'hand-over');
    expect(handOver).toHaveLength(1);
    expect(handOver[0]).toMatchObject({
      queueUrl: 'https://sqs.local/000000000000/gl-seed-src.fifo',
      messageGroupId: 'shoot--dev--api1.owner-notice',
      recordThen: 'lb-dst.example.com',
      command: {
        type: 'hand-over',
        seed: 'src',
        apiDomain: API,
        target: 'https://lb-dst.example.com:443',
        until: new Date(Math.max(cachedUntil, w.clock.now().getTime() + before.ttl * 1000)).toISOString(),
        commandId: `${ref.migrationId}/switch-api-record/hand-over`,
      },
    });
    expect(handOver[0]!.command.taskToken).toBeUndefined();
    expect((await w.admission.get('dev', 'api1')).steps.find((s) => s.id === 'switch-api-record')?.message).toContain(
      "the source's load balancer hands the shoot's connections over",
    );
    expect(await advertised(w)).toEqual([{ name: 'external', url: `https://${API}` }]);
    expect(await w.apiRecord.switchApiRecord(ref)).toMatchObject({ changed: false });
    await w.finalize.finalize(ref);

    // Assess
    expect(await w.apiRecords.get(API)).toEqual({ name: API, type: 'CNAME', value: 'lb-dst.example.com', ttl: 30 });
    const m = await w.admission.get('dev', 'api1');
    expect(m.state).toBe('Succeeded');
    expect(m.progress).toBe(100);
    expect(restore).toMatchObject({
      type: 'restore',
      etcd: { bucket: 'gl-backup-dst', final: true, expectedLastRevision: 101 },
    });
    expect(restore.type === 'restore' && restore.etcd?.ahead).toBeUndefined();
    // The pre-copy: the restore ahead went to the destination under its own command id, beating often, and each step says what it did.
    expect(ahead).toMatchObject({
      type: 'restore',
      seed: 'dst',
      commandId: `${ref.migrationId}/restore-etcd-ahead`,
      heartbeatSeconds: 10,
      etcd: { bucket: 'gl-backup-dst', final: false, ahead: true },
    });
    const message = (id: string) => m.steps.find((st) => st.id === id)?.message;
    expect(message('pre-copy-snapshots')).toBe('pre-copied 3 objects, 512 MB, up to revision 90');
    expect(message('restore-etcd-ahead')).toBe('etcd restored ahead to revision 90 from 3 snapshots (not serving)');
    expect(message('restore-etcd')).toBe(
      'etcd restored to revision 101 from 1 snapshots (final), caught up from the restore ahead at revision 90',
    );
    expect(m.preCopy).toEqual({ copied: 3, skipped: 0, bytes: 512_000_000, lastRevision: 90, aheadRevision: 90 });
    expect((await w.owners.get(RECORD))?.value).toBe((await w.garden.getSeed('dst'))!.status.identity);
    const shoot = await w.garden.getShoot('dev', 'api1');
    expect(shoot?.status.seedName).toBe('dst');
    expect(shoot?.status.lastOperation).toMatchObject({ type: 'Restore', state: 'Succeeded', progress: 100 });
    expect((await w.garden.getSeed('src'))!.status.shoots).toBe(0);
    expect((await w.garden.getSeed('dst'))!.status.shoots).toBe(1);
    expect((await w.shootStates.load({ project: 'dev', name: 'api1' }))?.state.extensions).toHaveLength(1);
    expect(w.events).toEqual([
      'MigrationStarted',
      'OwnershipTransferred',
      'SnapshotsCopied',
      'ApiRecordChanged',
      'MigrationSucceeded',
    ]);
    expect(m.steps.find((st) => st.id === 'switch-api-record')?.message).toBe(
      `${API} = CNAME lb-dst.example.com (was A 10.0.0.1): seed dst serves; the source's load balancer hands the shoot's connections over`,
    );
  });

  it("moves the shoot's secrets: restore-etcd carries the source's, sealed for the destination; persisting the migrated ShootState keeps them", async () => {
    // Prepare: the source was created with the shoot's secrets (as its create command carried them).
    const w = await world();
    const atCreate = await w.secrets.forSeed({ project: 'dev', name: 'api1', technicalID: 'shoot--dev--api1' }, 'src');
    await w.admission.start('dev', 'api1', { destinationSeed: 'dst' });
    const ref = w.started[0]!.ref;
    await w.paths.choosePath(ref);
    await preCopy(w, ref);

    // Act: the good path up to the restores.
    await w.seedAnswers.persistShootState(ref, await migrateAnswer(w, ref));
    await w.ownerSteps.deleteOwnerRecord(ref);
    await w.source.put(
      makeSnapshot({
        technicalID: 'shoot--dev--api1',
        kind: 'Full',
        startRevision: 0,
        lastRevision: 101,
        createdOn: Math.floor(w.clock.now().getTime() / 1000),
        compressionSuffix: '',
        final: true,
      }).key,
      new Uint8Array([1]),
    );
    await w.finalSnapshot.waitFinalSnapshot(ref);
    await answer(w, ref, 'delete-source-control-plane');
    await w.ownerSteps.setOwnerDestination(ref);
    await w.copy.beginCopy(ref);
    await w.copy.completeCopy(ref, { copied: 1, skipped: 0, bytes: 1, finalFound: true, lastRevision: 101 });
    const { command: restoreEtcd } = await w.seedCommands.beginCommand(ref, 'restore-etcd');
    await w.seedAnswers.completeCommand(
      ref,
      'restore-etcd',
      commandSuccess(
        restoreEtcd as never,
        { etcd: { restoredRevision: 101, snapshots: 1, final: true } } as never,
        w.clock.now(),
      ),
    );
    const { command: restoreExtensions } = await w.seedCommands.beginCommand(ref, 'restore-extensions');

    // Assess
    if (restoreEtcd.type !== 'restore' || restoreExtensions.type !== 'restore') throw new Error('expected restores');
    const id = 'shoot--dev--api1';
    expect(restoreEtcd.secrets?.context).toEqual(seedContext(id, 'dst'));
    const onDestination = await openSecrets(restoreEtcd.secrets!, w.keys, seedContext(id, 'dst'));
    expect(onDestination).toEqual(await openSecrets(atCreate, w.keys, seedContext(id, 'src')));
    await expect(openSecrets(restoreEtcd.secrets!, w.keys, seedContext(id, 'src'))).rejects.toThrow(/not for/);
    expect(restoreExtensions.secrets).toBeUndefined();
    expect(restoreExtensions.extensions?.shootState.secrets).toBeUndefined();
    const stored = await w.shootStates.load({ project: 'dev', name: 'api1' });
    expect(stored?.state.extensions).toHaveLength(1);
    expect(stored?.state.secrets?.ciphertext).toBe(atCreate.ciphertext);
  });

  it('takes the bad path when the source has not been heard from in three intervals', async () => {
    const w = await world();
    await w.admission.start('dev', 'api1', { destinationSeed: 'dst' });
    w.clock.advance(31_000);
    expect((await w.paths.choosePath(w.started[0]!.ref)).path).toBe('bad');
  });

  it('refuses a second migration while one runs, and a move to the same seed', async () => {
    const w = await world();
    await w.admission.start('dev', 'api1', { destinationSeed: 'dst' });
    expect(await rejection(w.admission.start('dev', 'api1', { destinationSeed: 'dst' }))).toMatchObject({
      code: 'MigrationInProgress',
    });
    const other = await world();
    const same = await rejection(other.admission.start('dev', 'api1', { destinationSeed: 'src' }));
    expect(same).toBeInstanceOf(AdmissionError);
    expect(same).toMatchObject({ code: 'SameSeed' });
  });

  it('lets exactly one of concurrent starts take the lock', async () => {
    const w = await world();
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => w.admission.start('dev', 'api1', { destinationSeed: 'dst' })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(
      results
        .filter((r) => r.status === 'rejected')
        .every((r) => (r as PromiseRejectedResult).reason instanceof ConflictError),
    ).toBe(true);
  });

  it('switches a failed good-path step to the bad path and keeps the migrated ShootState', async () => {
    const w = await world();
    await w.admission.start('dev', 'api1', { destinationSeed: 'dst', mode: 'good' });
    const ref = w.started[0]!.ref;
    await w.paths.choosePath(ref);
    await preCopy(w, ref);
    await w.seedAnswers.persistShootState(ref, await migrateAnswer(w, ref));
    await w.ownerSteps.deleteOwnerRecord(ref);
    await w.finalSnapshot.waitFinalSnapshot(ref);
    await w.paths.switchToBadPath(ref, { Error: 'States.Timeout', Cause: 'no callback' });
    const m = await w.admission.get('dev', 'api1');
    expect(m.path).toBe('bad');
    expect(m.badPathSwitch).toMatchObject({ failedStep: 'wait-final-snapshot' });
    expect(m.shootState?.source).toBe('migrated');
    expect((await w.ownerSteps.setOwnerDestination(ref)).ownerChangedAt).toBeGreaterThan(0);
  });

  it('ends in Error with the failed step and resumes there on the next call', async () => {
    const w = await world();
    const ref = await badPathPreCopied(w);
    await w.ownerSteps.setOwnerDestination(ref);
    await w.copy.beginCopy(ref);
    await w.finalize.fail(ref, {
      Error: 'EmptySource',
      Cause: JSON.stringify({ errorMessage: 'no full snapshot in gl-backup-src' }),
    });
    const failed = await w.admission.get('dev', 'api1');
    expect(failed.state).toBe('Error');
    expect(failed.error).toEqual({ step: 'copy-snapshots', message: 'EmptySource: no full snapshot in gl-backup-src' });
    expect((await w.garden.getShoot('dev', 'api1'))?.status.lastOperation).toMatchObject({ state: 'Error' });
    expect(w.events).toContain('MigrationFailed');

    const resumed = await w.admission.start('dev', 'api1', {});
    expect(resumed).toMatchObject({ migrationId: failed.id, resumed: true, resumeFrom: 'copy-snapshots' });
    expect(w.started.at(-1)).toMatchObject({ resumeFrom: 'copy-snapshots' });
  });

  it('bad path: a switch that gives up waiting fails the migration and leaves the API record on the source; resuming switches it', async () => {
    // Prepare: a bad-path migration whose destination restored but does not serve yet.
    const w = await world();
    const ref = await badPathPreCopied(w);
    // The switch may not run before the restore: the flow is elsewhere.
    await expect(w.apiRecord.switchApiRecord(ref)).rejects.toMatchObject({ name: 'MigrationTransitionError' });
    await w.ownerSteps.setOwnerDestination(ref);
    await w.copy.beginCopy(ref);
    await w.copy.completeCopy(ref, { copied: 1, skipped: 0, bytes: 1, finalFound: false, lastRevision: 7 });
    // A report from before the restore (an earlier stay of the shoot on dst) does not count.
    await w.gardenService.heartbeat('dst', serving('52.1.0.9'));
    w.clock.advance(1_000);
    await answer(w, ref, 'restore-etcd');
    await answer(w, ref, 'restore-extensions');

    // Act: the state machine's retries run out.
    const waited = await w.apiRecord.switchApiRecord(ref).catch((e: unknown) => e);
    await w.finalize.fail(ref, {
      Error: 'DestinationNotServing',
      Cause: JSON.stringify({ errorMessage: (waited as Error).message }),
    });

    // Assess
    expect(waited).toBeInstanceOf(DestinationNotServingError);
    expect((await w.apiRecords.get(API))?.value).toBe('10.0.0.1');
    expect((await w.admission.get('dev', 'api1')).error).toMatchObject({ step: 'switch-api-record' });
    expect(w.events).not.toContain('ApiRecordChanged');
    expect(await advertised(w)).toBeUndefined();

    // Resumed once the destination serves, the switch happens; the advertised URL takes the destination's port.
    await w.admission.start('dev', 'api1', {});
    w.clock.advance(1_000);
    await w.gardenService.heartbeat('dst', serving('52.1.0.9', 8443));
    expect((await w.apiRecord.switchApiRecord(ref)).target).toBe('A 52.1.0.9');
    expect(await advertised(w)).toEqual([{ name: 'external', url: `https://${API}:8443` }]);
  });

  it('a destination that serves but names no load balancer completes the switch without touching the record', async () => {
    const w = await world();
    const ref = await badPathPreCopied(w);
    await w.ownerSteps.setOwnerDestination(ref);
    await w.copy.beginCopy(ref);
    await w.copy.completeCopy(ref, { copied: 1, skipped: 0, bytes: 1, finalFound: false, lastRevision: 7 });
    await answer(w, ref, 'restore-etcd');
    await answer(w, ref, 'restore-extensions');
    w.clock.advance(1_000);
    await w.gardenService.heartbeat('dst', {
      ...READY,
      controlPlanes: [{ technicalID: 'shoot--dev--api1', active: true }],
    });

    expect(await w.apiRecord.switchApiRecord(ref)).toMatchObject({ changed: false, target: null });
    expect((await w.apiRecords.get(API))?.value).toBe('10.0.0.1');
    expect(await advertised(w)).toBeUndefined();
    expect((await w.admission.get('dev', 'api1')).steps.find((st) => st.id === 'switch-api-record')).toMatchObject({
      state: 'succeeded',
      message: expect.stringContaining('no load balancer'),
    });
  });

  it('previews a migration with every admission rule, writing and starting nothing', async () => {
    const w = await world();

    const preview = await w.admission.preview('dev', 'api1', {});
    const same = await rejection(w.admission.preview('dev', 'api1', { destinationSeed: 'src' }));

    expect(preview).toMatchObject({
      dryRun: true,
      sourceSeed: 'src',
      destinationSeed: 'dst',
      resumed: false,
      resumeFrom: 'choose-path',
      mode: 'auto',
      path: 'good',
    });
    expect(preview.pathReason).toMatch(/younger than 3 intervals/);
    expect(preview.steps.map((s) => s.id)).toEqual([
      'pre-copy-snapshots',
      'restore-etcd-ahead',
      'migrate-extensions',
      'persist-shootstate',
      'delete-owner-record',
      'wait-final-snapshot',
      'delete-source-control-plane',
      'set-owner-destination',
      'copy-snapshots',
      'restore-etcd',
      'restore-extensions',
      'switch-api-record',
      'finalize',
    ]);
    expect(preview.fenceBoundMs).toBe(fenceBound());
    expect(same).toMatchObject({ code: 'SameSeed' });
    expect(w.started).toEqual([]);
    expect(await rejection(w.admission.get('dev', 'api1'))).toBeInstanceOf(NotFoundError);
    expect((await w.garden.getShoot('dev', 'api1'))?.status.migration).toBeUndefined();
  });

  it("previews the bad path from the pre-copy to set-owner-destination, for mode bad and for a silent source, with the deployment's fence bound", async () => {
    const w = await world({ ownershipTimings: { ownerCheckInterval: 500, unknownGrace: 5_000 } });
    const bad = await w.admission.preview('dev', 'api1', { mode: 'bad' });
    w.clock.advance(31_000);
    await w.gardenService.heartbeat('dst', READY);
    const silent = await w.admission.preview('dev', 'api1', {});

    const restore = [
      'pre-copy-snapshots',
      'restore-etcd-ahead',
      'set-owner-destination',
      'copy-snapshots',
      'restore-etcd',
      'restore-extensions',
      'switch-api-record',
      'finalize',
    ];
    expect(bad).toMatchObject({ path: 'bad', pathReason: 'mode bad requested', mode: 'bad' });
    expect(bad.steps.map((s) => s.id)).toEqual(restore);
    expect(silent).toMatchObject({ path: 'bad', mode: 'auto' });
    expect(silent.pathReason).toMatch(/31 s old, not younger than 3 intervals \(30 s\)/);
    expect(silent.steps.map((s) => s.id)).toEqual(restore);
    expect(bad.fenceBoundMs).toBe(fenceBound({ ownerCheckInterval: 500, unknownGrace: 5_000 }));
    expect(bad.fenceBoundMs).not.toBe(fenceBound());
    expect(w.started).toEqual([]);
  });

  it('resumes a migration whose execution ended without recording it, and not one whose execution runs', async () => {
    // Prepare: an execution that dies at copy-snapshots (a runtime error no Catch reaches).
    const w = await world();
    const ref = await badPathPreCopied(w);
    await w.ownerSteps.setOwnerDestination(ref);
    await w.copy.beginCopy(ref);
    const busy = await rejection(w.admission.start('dev', 'api1', {}));

    // Act
    w.ended.add(w.names[0]!);
    const resumed = await w.admission.start('dev', 'api1', {});

    // Assess
    expect(busy).toBeInstanceOf(ConflictError);
    expect(resumed).toMatchObject({ migrationId: ref.migrationId, resumed: true, resumeFrom: 'copy-snapshots' });
    expect(w.names).toEqual([`${ref.migrationId}-1`, `${ref.migrationId}-2`]);
    const m = await w.admission.get('dev', 'api1');
    expect(m.steps.find((s) => s.id === 'copy-snapshots')?.message).toMatch(/ended without recording/);
  });

  it('releases the lock in Error when the state machine cannot be started, so that a retry resumes', async () => {
    const w = await world({ failStart: true });
    await expect(w.admission.start('dev', 'api1', { destinationSeed: 'dst' })).rejects.toThrow('states unavailable');
    const m = await w.admission.get('dev', 'api1');
    expect(m.state).toBe('Error');
    expect(m.error?.message).toContain('could not be started');
  });
});

describe("begin-copy: the copy's wait for the final snapshot (docs/design.md section 4, Copy)", () => {
  const SETTINGS = DEFAULT_SIDECAR_SETTINGS;
  const reporting = {
    ...READY,
    controlPlanes: [{ technicalID: 'shoot--dev--api1', active: true, sidecarSettings: SETTINGS }],
  };

  /** A bad-path migration of api1 from src to dst, up to its owner change; `silentFor`: src heartbeats no more for that long before. */
  async function upToOwnerChange(o: { heartbeat: object; silentFor?: number; finalSnapshotWait?: string }) {
    const w = await world();
    await w.gardenService.heartbeat('src', o.heartbeat);
    w.clock.advance(o.silentFor ?? 0);
    await w.gardenService.heartbeat('dst', READY);
    await w.admission.start('dev', 'api1', {
      destinationSeed: 'dst',
      mode: 'bad',
      ...(o.finalSnapshotWait ? { finalSnapshotWait: o.finalSnapshotWait } : {}),
    });
    const ref = w.started[0]!.ref;
    await w.paths.choosePath(ref);
    await preCopy(w, ref);
    const { ownerChangedAt } = await w.ownerSteps.setOwnerDestination(ref);
    w.clock.advance(2_000);
    return { w, ref, ownerChangedAt };
  }

  it('a source heard from: the fence bound, the limit and the reaction after the owner change, recorded on the migration', async () => {
    const { w, ref, ownerChangedAt } = await upToOwnerChange({ heartbeat: reporting });
    const input = await w.copy.beginCopy(ref);
    expect(input.proceedWithoutFinalAt).toBe(ownerChangedAt + 60_000 + 51_000);
    expect(fenceBound(input.fenceTimings)).toBe(60_000);
    const record = await w.admission.get('dev', 'api1');
    expect(record.copyWait).toMatchObject({
      basis: 'bounds',
      proceedAt: new Date(ownerChangedAt + 111_000).toISOString(),
      floorAt: new Date(ownerChangedAt + 60_000).toISOString(),
      fenceBoundMs: 60_000,
      lossBoundMs: 51_000,
    });
    expect(record.steps.find((s) => s.id === 'copy-snapshots')?.message).toMatch(
      /^waiting for the source's final snapshot until .* since the owner change/,
    );
    await w.copy.completeCopy(ref, { copied: 2, skipped: 0, bytes: 9, finalFound: false, lastRevision: 88 });
    expect((await w.admission.get('dev', 'api1')).steps.find((s) => s.id === 'copy-snapshots')?.message).toMatch(
      /no final snapshot \(latest used from .*: the source's fence bound 60 s/,
    );
  });

  it("a seed whose lease ran out long before: only the fence bound after the owner change; the seed's report still counts", async () => {
    const { w, ref, ownerChangedAt } = await upToOwnerChange({ heartbeat: reporting, silentFor: 10 * 60_000 });
    const input = await w.copy.beginCopy(ref);
    expect(input.proceedWithoutFinalAt).toBe(ownerChangedAt + 60_000);
    expect((await w.admission.get('dev', 'api1')).copyWait?.basis).toBe('bounds-since-lease-loss');
  });

  it('a source that reported nothing waits the fixed 10 minutes from the copy; an explicit wait outlasts the bounds', async () => {
    const old = await upToOwnerChange({ heartbeat: READY, silentFor: 10 * 60_000 });
    expect((await old.w.copy.beginCopy(old.ref)).proceedWithoutFinalAt).toBe(old.w.clock.now().getTime() + 600_000);
    expect((await old.w.admission.get('dev', 'api1')).copyWait?.basis).toBe('fixed');

    const patient = await upToOwnerChange({ heartbeat: reporting, silentFor: 10 * 60_000, finalSnapshotWait: '30m' });
    expect((await patient.w.copy.beginCopy(patient.ref)).proceedWithoutFinalAt).toBe(
      patient.ownerChangedAt + 30 * 60_000,
    );
    expect(await patient.w.admission.get('dev', 'api1')).toMatchObject({
      finalSnapshotWait: '30m',
      copyWait: { basis: 'explicit' },
    });
  });

  it('refuses a finalSnapshotWait that is no duration, with a clear 400', async () => {
    const w = await world();
    await expect(
      w.admission.start('dev', 'api1', { destinationSeed: 'dst', mode: 'bad', finalSnapshotWait: '10 minutes' }),
    ).rejects.toMatchObject({ field: 'finalSnapshotWait' });
  });

  it('refuses a finalSnapshotWait of the right form out of 1s to 24h as an admission rule (422), not as malformed', async () => {
    const w = await world();
    for (const finalSnapshotWait of ['0s', '25h', '']) {
      const refused = w.admission.start('dev', 'api1', { destinationSeed: 'dst', mode: 'bad', finalSnapshotWait });
      await expect(refused, finalSnapshotWait).rejects.toBeInstanceOf(AdmissionError);
      await expect(refused, finalSnapshotWait).rejects.toMatchObject({
        field: 'finalSnapshotWait',
        code: 'OutOfRange',
      });
    }
  });
});
