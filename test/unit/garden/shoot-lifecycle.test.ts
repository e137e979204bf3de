import { describe, expect, it } from 'vitest';
import { commandSuccess } from '../../../core/commands/protocol.js';
import type { CommandOf, SeedCommand } from '../../../core/commands/schema.js';
import { AdmissionError, ConflictError } from '../../../core/errors.js';
import type { EventSink } from '../../../core/garden/context.js';
import {
  LifecycleController,
  executionName,
  type OperationWorkflow,
} from '../../../core/garden/lifecycle-controller.js';
import { MemoryGardenRepository } from '../../../core/garden/memory-repository.js';
import { ShootOperationSteps, type OperationRef } from '../../../core/garden/operation-steps.js';
import { GardenService } from '../../../core/garden/service.js';
import { MAX_OPERATION_ATTEMPTS } from '../../../core/garden/shoot-operations.js';
import { ApiRecordWriter, InMemoryApiRecords } from '../../../core/dns/index.js';
import { InMemoryOwnerRecords } from '../../../core/ownership/memory-owner-records.js';
import { ManualClock, SequentialIds, seedBody, shootBody } from './builders.js';
import { generateShootSecrets } from '../../../core/pki/shoot-secrets.js';
import {
  InMemoryShootStateStore,
  LocalDataKeys,
  openSecrets,
  seedContext,
  ShootSecretsKeeper,
  type ShootSecrets,
} from '../../../core/shootstate/index.js';

const DOMAIN = 'internal.gardenless.test';
const CONFIRM = { metadata: { annotations: { 'confirmation.gardener.cloud/deletion': 'true' } } };
const READY = {
  conditions: [
    { type: 'GardenletReady', status: 'True' },
    { type: 'BackupBucketsReady', status: 'True' },
  ],
  leaseDurationSeconds: 3_600,
};

/** The garden with everything an operation touches in memory, and the executions the controller starts. */
function lifecycle() {
  const clock = new ManualClock();
  const repo = new MemoryGardenRepository({ clock });
  const published: { type: string; detail: Record<string, unknown> }[] = [];
  const events: EventSink = { publish: async (type, detail) => void published.push({ type, detail }) };
  const service = new GardenService({
    repository: repo,
    clock,
    ids: new SequentialIds(),
    events,
    provisioner: { provision: async (n) => ({ commandQueueUrl: `q/${n}` }), deprovision: async () => {} },
  });
  const owners = new InMemoryOwnerRecords();
  const apiRecords = new InMemoryApiRecords();
  const apiWriter = new ApiRecordWriter({
    records: apiRecords,
    settings: { externalDomain: 'shoots.gardenless.test', ttlSeconds: 20 },
    events,
  });
  const shootStates = new InMemoryShootStateStore();
  const keys = new LocalDataKeys();
  const secrets = new ShootSecretsKeeper({ store: shootStates, keys, generate: secretsOnce, now: () => clock.now() });
  const steps = new ShootOperationSteps({
    repo,
    owners,
    internalDomain: DOMAIN,
    events,
    clock,
    apiRecords: apiWriter,
    secrets,
    shootStates,
  });
  const started: { name: string; ref: OperationRef }[] = [];
  const workflow: OperationWorkflow = { start: async ({ name, input }) => void started.push({ name, ref: input.ref }) };
  const controller = new LifecycleController({ repo, workflow, events, clock });
  return { clock, repo, service, owners, apiRecords, steps, controller, started, published, shootStates, keys };
}

let generated: ShootSecrets | undefined;
async function secretsOnce(now: Date): Promise<ShootSecrets> {
  generated ??= await generateShootSecrets(now);
  return generated;
}

const API = 'api.api1.dev.shoots.gardenless.test';

/** What the agent answers to a command, as the state machine hands it on; a serving control plane names its load balancer. */
function answer(command: SeedCommand, externalUrl = 'https://lb-a.example.com:443'): unknown {
  if (command.type === 'delete-control-plane')
    return commandSuccess(command, { deleted: true, extensionsDropped: 0 }, new Date());
  const serving = !(command as CommandOf<'reconcile'>).controlPlane.hibernated;
  return commandSuccess(
    command as CommandOf<'reconcile'>,
    { extensions: [], etcdReady: serving, ...(serving ? { externalUrl } : {}) },
    new Date(),
  );
}

async function placedShoot(g: ReturnType<typeof lifecycle>, name = 'api1') {
  await g.service.putSeed('seed-a', seedBody());
  await g.service.heartbeat('seed-a', READY);
  await g.service.putShoot('dev', name, shootBody({ spec: { seedName: 'seed-a' } }));
  const op = (await g.repo.getShoot('dev', name))!.status.operation!;
  return { project: 'dev', name, operationId: op.id };
}

describe('shoot operations: Create', () => {
  it('starts one execution per operation, sets the owner record, sends create-control-plane and ends Succeeded at 100 %', async () => {
    // Prepare
    const g = lifecycle();
    const ref = await placedShoot(g);
    // Act
    await g.controller.ensureOperation('dev', 'api1');
    await g.controller.ensureOperation('dev', 'api1');
    const dispatched = await g.steps.dispatch(ref);
    const processing = await g.repo.getShoot('dev', 'api1');
    if (dispatched.superseded) throw new Error('superseded');
    await g.steps.succeed(ref, answer(dispatched.command));
    // Assess
    const shoot = (await g.repo.getShoot('dev', 'api1'))!;
    expect(g.started.map((s) => s.name)).toEqual([executionName(shoot), executionName(shoot)]);
    expect(executionName(shoot)).toMatch(/^[A-Za-z0-9_-]{1,80}$/);
    expect(dispatched.command).toMatchObject({
      type: 'create-control-plane',
      seed: 'seed-a',
      commandId: `op/${ref.operationId}/1`,
      controlPlane: { hibernated: false, backup: { bucket: 'gl-backup-aws-eu1' } },
    });
    expect(dispatched.queueUrl).toBe('q/seed-a');
    expect(processing!.status.lastOperation).toMatchObject({ type: 'Create', state: 'Processing', progress: 50 });
    expect(shoot.status.lastOperation).toMatchObject({ type: 'Create', state: 'Succeeded', progress: 100 });
    expect((await g.owners.get(`owner.api1.dev.${DOMAIN}`))?.value).toBe('seed-a-uuid-1');
    expect(g.published.map((e) => e.type)).toContain('ShootOperationSucceeded');
    expect(await g.apiRecords.get(API)).toEqual({ name: API, type: 'CNAME', value: 'lb-a.example.com', ttl: 20 });
    expect(g.published.find((e) => e.type === 'ApiRecordChanged')?.detail).toMatchObject({
      record: API,
      seedName: 'seed-a',
      from: null,
      to: 'CNAME lb-a.example.com',
    });
    expect(shoot.status.lastOperation?.description).toContain(`${API} = CNAME lb-a.example.com`);
    expect(shoot.status.advertisedAddresses).toEqual([{ name: 'external', url: `https://${API}` }]);
  });

  it("sends the shoot's secrets, made once and sealed for the seed, with create and with every later reconcile", async () => {
    // Prepare
    const g = lifecycle();
    const ref = await placedShoot(g);
    const id = 'shoot--dev--api1';

    // Act
    const create = await g.steps.dispatch(ref);
    if (create.superseded || create.command.type !== 'create-control-plane') throw new Error('expected a create');
    await g.steps.succeed(ref, answer(create.command));
    await g.service.patchShoot('dev', 'api1', { spec: { hibernation: { enabled: true } } });
    const hibernate = await g.steps.dispatch({
      project: 'dev',
      name: 'api1',
      operationId: (await g.repo.getShoot('dev', 'api1'))!.status.operation!.id,
    });
    if (hibernate.superseded || hibernate.command.type !== 'reconcile') throw new Error('expected a reconcile');

    // Assess
    const sealed = create.command.secrets!;
    expect(sealed.context).toEqual(seedContext(id, 'seed-a'));
    expect(JSON.stringify(create.command)).not.toContain('PRIVATE KEY');
    const opened = await openSecrets(sealed, g.keys, seedContext(id, 'seed-a'));
    expect(await openSecrets(hibernate.command.secrets!, g.keys, seedContext(id, 'seed-a'))).toEqual(opened);
    expect((await g.shootStates.load({ project: 'dev', name: 'api1' }))?.state.secrets?.context).toEqual({
      'gardenless:shoot': id,
      'gardenless:use': 'garden',
    });
  });

  it('leaves the API record alone while the control plane does not serve, and through hibernation', async () => {
    // Prepare
    const g = lifecycle();
    const ref = await placedShoot(g);
    const sent = await g.steps.dispatch(ref);
    if (sent.superseded) throw new Error('superseded');
    // Act: an answer without a load balancer (etcd not ready yet) writes nothing.
    await g.steps.succeed(
      ref,
      commandSuccess(sent.command as CommandOf<'reconcile'>, { extensions: [], etcdReady: false }, new Date()),
    );
    const before = await g.apiRecords.get(API);
    await g.apiRecords.set({ name: API, target: { type: 'A', value: '52.0.0.1' } });
    await g.service.putShoot(
      'dev',
      'api1',
      shootBody({ spec: { seedName: 'seed-a', hibernation: { enabled: true } } }),
    );
    const hibernate = {
      project: 'dev',
      name: 'api1',
      operationId: (await g.repo.getShoot('dev', 'api1'))!.status.operation!.id,
    };
    const sleeping = await g.steps.dispatch(hibernate);
    if (sleeping.superseded) throw new Error('superseded');
    await g.steps.succeed(hibernate, answer(sleeping.command));
    // Assess
    expect(before).toBeUndefined();
    expect(await g.apiRecords.get(API)).toMatchObject({ type: 'A', value: '52.0.0.1' });
    expect(g.published.filter((e) => e.type === 'ApiRecordChanged')).toEqual([]);
    expect((await g.repo.getShoot('dev', 'api1'))!.status.advertisedAddresses).toBeUndefined();
  });

  it('advertises the API domain once the record names the serving plane, and keeps advertising it through hibernation', async () => {
    // Prepare
    const g = lifecycle();
    const ref = await placedShoot(g);
    const sent = await g.steps.dispatch(ref);
    if (sent.superseded) throw new Error('superseded');
    await g.steps.succeed(ref, answer(sent.command, 'https://lb-a.example.com:6443'));
    // Act
    await g.service.putShoot(
      'dev',
      'api1',
      shootBody({ spec: { seedName: 'seed-a', hibernation: { enabled: true } } }),
    );
    const hibernate = {
      project: 'dev',
      name: 'api1',
      operationId: (await g.repo.getShoot('dev', 'api1'))!.status.operation!.id,
    };
    const sleeping = await g.steps.dispatch(hibernate);
    if (sleeping.superseded) throw new Error('superseded');
    await g.steps.succeed(hibernate, answer(sleeping.command));
    // Assess
    const shoot = (await g.repo.getShoot('dev', 'api1'))!;
    expect(shoot.status.lastOperation).toMatchObject({ type: 'Hibernate', state: 'Succeeded' });
    expect(shoot.status.advertisedAddresses).toEqual([{ name: 'external', url: `https://${API}:6443` }]);
  });
});

describe('shoot operations: the API record', () => {
  it('follows a changed load balancer on the placed seed (A for IPv4), but an answer arriving while a migration runs leaves it to the migration', async () => {
    const g = lifecycle();
    const ref = await placedShoot(g);
    const sent = await g.steps.dispatch(ref);
    if (sent.superseded) throw new Error('superseded');
    await g.steps.succeed(ref, answer(sent.command, 'https://52.0.0.7:6443'));
    expect(await g.apiRecords.get(API)).toMatchObject({ type: 'A', value: '52.0.0.7' });
    expect((await g.repo.getShoot('dev', 'api1'))!.status.advertisedAddresses).toEqual([
      { name: 'external', url: `https://${API}:6443` },
    ]);

    await g.service.putShoot('dev', 'api1', shootBody({ spec: { seedName: 'seed-a', purpose: 'testing' } }));
    const reconcile = {
      project: 'dev',
      name: 'api1',
      operationId: (await g.repo.getShoot('dev', 'api1'))!.status.operation!.id,
    };
    const again = await g.steps.dispatch(reconcile);
    if (again.superseded) throw new Error('superseded');
    await g.steps.succeed(reconcile, answer(again.command, 'https://[2001:db8::7]:443'));
    expect(await g.apiRecords.get(API)).toMatchObject({ type: 'AAAA', value: '2001:db8::7' });
    expect((await g.repo.getShoot('dev', 'api1'))!.status.advertisedAddresses).toEqual([
      { name: 'external', url: `https://${API}` },
    ]);

    // A migration started meanwhile: its switch step owns the record; a late answer must not point it anywhere.
    await g.service.putShoot('dev', 'api1', shootBody({ spec: { seedName: 'seed-a', purpose: 'evaluation' } }));
    const late = {
      project: 'dev',
      name: 'api1',
      operationId: (await g.repo.getShoot('dev', 'api1'))!.status.operation!.id,
    };
    const third = await g.steps.dispatch(late);
    if (third.superseded) throw new Error('superseded');
    const shoot = (await g.repo.getShoot('dev', 'api1'))!;
    await g.repo.updateShoot(
      { ...shoot, status: { ...shoot.status, migration: { id: 'm1', state: 'Running' } } },
      shoot.metadata.resourceVersion,
    );
    await g.steps.succeed(late, answer(third.command, 'https://52.0.0.9:8443'));
    expect(await g.apiRecords.get(API)).toMatchObject({ type: 'AAAA', value: '2001:db8::7' });
    expect((await g.repo.getShoot('dev', 'api1'))!.status.advertisedAddresses).toEqual([
      { name: 'external', url: `https://${API}` },
    ]);
  });

  it('retries a failed attempt with growing delays (Error), and fails it after the last attempt (Failed)', async () => {
    // Prepare
    const g = lifecycle();
    const ref = await placedShoot(g);
    const outcomes: { retry: boolean; waitSeconds: number }[] = [];
    // Act
    for (let i = 0; i < MAX_OPERATION_ATTEMPTS; i++) {
      await g.steps.dispatch(ref);
      outcomes.push(await g.steps.fail(ref, { Error: 'RuntimeUnavailable', Cause: 'etcd did not start' }));
      if (i === 0)
        expect((await g.repo.getShoot('dev', 'api1'))!.status.lastOperation).toMatchObject({
          state: 'Error',
          description: expect.stringContaining('retrying in 10 s'),
        });
    }
    // Assess
    expect(outcomes.map((o) => o.retry)).toEqual([true, true, true, true, false]);
    expect(outcomes.slice(0, 4).map((o) => o.waitSeconds)).toEqual([10, 20, 40, 80]);
    expect((await g.repo.getShoot('dev', 'api1'))!.status.lastOperation).toMatchObject({
      type: 'Create',
      state: 'Failed',
      description: expect.stringContaining('RuntimeUnavailable'),
    });
    expect(g.published.filter((e) => e.type === 'ShootOperationFailed')).toHaveLength(1);
  });
});

describe('shoot operations: Reconcile, Hibernate, Wake', () => {
  it('requests Hibernate and Wake on hibernation changes and Reconcile on a failure tolerance change; metadata changes need none', async () => {
    // Prepare: a shoot without HA, so that its failure tolerance can be raised.
    const g = lifecycle();
    await g.service.putSeed('seed-a', seedBody());
    await g.service.putShoot('dev', 'api1', shootBody({ spec: { seedName: 'seed-a', controlPlane: undefined } }));
    const types: (string | undefined)[] = [];
    const spec = { seedName: 'seed-a', controlPlane: undefined };
    // Act
    for (const change of [
      { spec: { ...spec, hibernation: { enabled: true } } },
      { spec: { ...spec, hibernation: { enabled: true } }, metadata: { labels: { team: 'a' } } },
      { spec: { ...spec, hibernation: { enabled: false } } },
      {
        spec: {
          ...spec,
          hibernation: { enabled: false },
          controlPlane: { highAvailability: { failureTolerance: { type: 'zone' } } },
        },
      },
    ]) {
      const { resource } = await g.service.putShoot('dev', 'api1', shootBody(change));
      types.push(resource.status.lastOperation?.type);
    }
    // Assess
    expect(types).toEqual(['Hibernate', 'Hibernate', 'Wake', 'Reconcile']);
    expect(g.published.filter((e) => e.type === 'ShootOperationRequested').map((e) => e.detail.type)).toEqual([
      'Hibernate',
      'Wake',
      'Reconcile',
    ]);
  });

  it('sends reconcile with hibernated: true for Hibernate, and a newer operation supersedes an older one', async () => {
    // Prepare
    const g = lifecycle();
    await placedShoot(g);
    await g.service.putShoot(
      'dev',
      'api1',
      shootBody({ spec: { seedName: 'seed-a', hibernation: { enabled: true } } }),
    );
    const hibernate = {
      project: 'dev',
      name: 'api1',
      operationId: (await g.repo.getShoot('dev', 'api1'))!.status.operation!.id,
    };
    const sent = await g.steps.dispatch(hibernate);
    await g.service.putShoot(
      'dev',
      'api1',
      shootBody({ spec: { seedName: 'seed-a', hibernation: { enabled: false } } }),
    );
    // Act
    const late = sent.superseded ? undefined : await g.steps.succeed(hibernate, answer(sent.command));
    const again = await g.steps.dispatch(hibernate);
    // Assess
    expect(sent).toMatchObject({
      superseded: false,
      command: { type: 'reconcile', controlPlane: { hibernated: true } },
    });
    expect(late).toEqual({ state: 'Superseded' });
    expect(again).toEqual({ superseded: true });
    expect((await g.repo.getShoot('dev', 'api1'))!.status.lastOperation).toMatchObject({
      type: 'Wake',
      state: 'Processing',
      progress: 0,
    });
  });

  it('refuses a change that needs the seed while a migration holds the shoot (409), and the operation waits for it', async () => {
    // Prepare
    const g = lifecycle();
    const ref = await placedShoot(g);
    const shoot = (await g.repo.getShoot('dev', 'api1'))!;
    await g.repo.updateShoot(
      { ...shoot, status: { ...shoot.status, migration: { id: 'm1', state: 'Running' } } },
      shoot.metadata.resourceVersion,
    );
    // Act
    const refused = await g.service
      .putShoot('dev', 'api1', shootBody({ spec: { seedName: 'seed-a', hibernation: { enabled: true } } }))
      .catch((e: unknown) => e);
    const blocked = await g.steps.dispatch(ref).catch((e: unknown) => e);
    // Assess
    expect(refused).toBeInstanceOf(ConflictError);
    expect(refused).toMatchObject({ code: 'MigrationInProgress' });
    expect(blocked).toMatchObject({ name: 'OperationBlocked' });
  });
});

describe('operations a migration moved to another seed', () => {
  /** What the migration's finalize does: the shoot on seed-b, lastOperation Restore Succeeded, the lock released. */
  async function migrateToB(g: ReturnType<typeof lifecycle>): Promise<void> {
    await g.service.putSeed('seed-b', seedBody());
    await g.service.heartbeat('seed-b', READY);
    const shoot = (await g.repo.getShoot('dev', 'api1'))!;
    const at = g.clock.now().toISOString();
    await g.repo.moveShoot(
      {
        ...shoot,
        spec: { ...shoot.spec, seedName: 'seed-b' },
        status: {
          ...shoot.status,
          seedName: 'seed-b',
          migration: { id: 'm1', state: 'Succeeded' },
          lastOperation: {
            type: 'Restore',
            state: 'Succeeded',
            progress: 100,
            description: 'restored on seed-b',
            lastUpdateTime: at,
          },
        },
      },
      { fromSeed: 'seed-a', toSeed: 'seed-b', expectedVersion: shoot.metadata.resourceVersion },
    );
  }

  async function hibernationRequested(g: ReturnType<typeof lifecycle>): Promise<OperationRef> {
    const create = await placedShoot(g);
    const sent = await g.steps.dispatch(create);
    if (sent.superseded) throw new Error('superseded');
    await g.steps.succeed(create, answer(sent.command));
    await g.service.putShoot(
      'dev',
      'api1',
      shootBody({ spec: { seedName: 'seed-a', hibernation: { enabled: true } } }),
    );
    return { project: 'dev', name: 'api1', operationId: (await g.repo.getShoot('dev', 'api1'))!.status.operation!.id };
  }

  it('a Create that waited for the migration is done: nothing is sent to the old seed, the owner record is left to the migration', async () => {
    // Prepare
    const g = lifecycle();
    const ref = await placedShoot(g);
    await migrateToB(g);
    // Act
    const dispatched = await g.steps.dispatch(ref);
    // Assess
    const shoot = (await g.repo.getShoot('dev', 'api1'))!;
    expect(dispatched).toEqual({ superseded: true });
    expect(shoot.status.operation).toBeUndefined();
    expect(shoot.status.lastOperation).toMatchObject({ type: 'Restore', state: 'Succeeded' });
    expect(await g.owners.get(`owner.api1.dev.${DOMAIN}`)).toBeUndefined();
    await g.controller.resync();
    g.clock.advance(120_000);
    expect((await g.controller.resync()).restarted).toEqual([]);
  });

  it('a hibernation that waited for the migration is requested again on the new seed, as a new operation the controller starts', async () => {
    // Prepare
    const g = lifecycle();
    const ref = await hibernationRequested(g);
    await migrateToB(g);
    // Act
    const first = await g.steps.dispatch(ref);
    const again = await g.steps.dispatch(ref);
    const moved = (await g.repo.getShoot('dev', 'api1'))!.status.operation!;
    await g.controller.ensureOperation('dev', 'api1');
    const next = { project: 'dev', name: 'api1', operationId: moved.id };
    const sent = await g.steps.dispatch(next);
    // Assess
    expect(first).toEqual({ superseded: true });
    expect(again).toEqual({ superseded: true });
    expect(moved).toMatchObject({ type: 'Hibernate', seedName: 'seed-b', attempts: 0 });
    expect(moved.id).not.toBe(ref.operationId);
    expect(
      g.published.filter((e) => e.type === 'ShootOperationRequested' && e.detail.operationId === moved.id),
    ).toEqual([
      {
        type: 'ShootOperationRequested',
        detail: { project: 'dev', shoot: 'api1', operationId: moved.id, type: 'Hibernate', seedName: 'seed-b' },
      },
    ]);
    expect(g.started.at(-1)?.ref).toEqual(next);
    if (sent.superseded) throw new Error('superseded');
    expect(sent.queueUrl).toBe('q/seed-b');
    expect(sent.command).toMatchObject({ type: 'reconcile', seed: 'seed-b', controlPlane: { hibernated: true } });
  });

  it.each(['succeed', 'fail'] as const)(
    "an answer (%s) from the old seed, which ran the command while the migration moved the shoot, is not the new seed's",
    async (outcome) => {
      // Prepare
      const g = lifecycle();
      const ref = await hibernationRequested(g);
      const sent = await g.steps.dispatch(ref);
      if (sent.superseded) throw new Error('superseded');
      await migrateToB(g);
      // Act
      const result =
        outcome === 'succeed'
          ? await g.steps.succeed(ref, answer(sent.command))
          : await g.steps.fail(ref, { Error: 'RuntimeUnavailable', Cause: 'gone' });
      // Assess
      const shoot = (await g.repo.getShoot('dev', 'api1'))!;
      expect(result).toMatchObject(
        outcome === 'succeed' ? { state: 'Superseded' } : { superseded: true, retry: false },
      );
      expect(shoot.status.operation).toMatchObject({ type: 'Hibernate', seedName: 'seed-b', attempts: 0 });
      expect(shoot.status.lastOperation).toMatchObject({
        type: 'Hibernate',
        state: 'Processing',
        description: expect.stringContaining('seed-b'),
      });
    },
  );
});

describe('shoot deletion', () => {
  it('refuses without the confirmation annotation, naming it (422 DeletionNotConfirmed), and writes nothing', async () => {
    const g = lifecycle();
    await placedShoot(g);
    const before = g.repo.snapshot();
    const error = await g.service.deleteShoot('dev', 'api1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AdmissionError);
    expect(error).toMatchObject({
      code: 'DeletionNotConfirmed',
      message: expect.stringContaining('confirmation.gardener.cloud/deletion'),
    });
    expect(g.repo.snapshot()).toEqual(before);
  });

  it("with it: deletionTimestamp and a Delete operation; the agent's answer removes the owner record and the shoot and frees its place", async () => {
    // Prepare
    const g = lifecycle();
    const create = await placedShoot(g);
    const sent = await g.steps.dispatch(create);
    if (!sent.superseded) await g.steps.succeed(create, answer(sent.command));
    await g.service.patchShoot('dev', 'api1', CONFIRM);
    // Act
    const deletion = await g.service.deleteShoot('dev', 'api1');
    const repeated = await g.service.deleteShoot('dev', 'api1');
    const refusedSpec = await g.service
      .putShoot(
        'dev',
        'api1',
        shootBody({ spec: { seedName: 'seed-a', purpose: 'testing' }, metadata: CONFIRM.metadata }),
      )
      .catch((e: unknown) => e);
    const ref = {
      project: 'dev',
      name: 'api1',
      operationId: (await g.repo.getShoot('dev', 'api1'))!.status.operation!.id,
    };
    const countWhileDeleting = (await g.repo.getSeed('seed-a'))!.status.shoots;
    const del = await g.steps.dispatch(ref);
    if (del.superseded) throw new Error('superseded');
    await g.steps.succeed(ref, answer(del.command));
    // Assess
    expect(deletion).toMatchObject({
      removed: false,
      shoot: {
        metadata: { deletionTimestamp: expect.any(String) },
        status: { lastOperation: { type: 'Delete', state: 'Processing' } },
      },
    });
    expect(repeated).toEqual(deletion);
    expect(refusedSpec).toMatchObject({ code: 'ShootDeleting' });
    expect(del.command).toMatchObject({
      type: 'delete-control-plane',
      keepBackups: true,
      keepExternalResources: false,
    });
    expect(countWhileDeleting).toBe(1);
    expect(await g.repo.getShoot('dev', 'api1')).toBeUndefined();
    expect((await g.repo.getSeed('seed-a'))!.status.shoots).toBe(0);
    expect(await g.owners.get(`owner.api1.dev.${DOMAIN}`)).toBeUndefined();
    expect(await g.apiRecords.get(API)).toBeUndefined();
    expect(g.published.filter((e) => e.type === 'ApiRecordChanged').map((e) => e.detail.to)).toEqual([
      'CNAME lb-a.example.com',
      null,
    ]);
    expect(g.published.filter((e) => e.type === 'ShootDeleted').map((e) => e.detail)).toEqual([
      { project: 'dev', shoot: 'api1', seedName: 'seed-a' },
    ]);
    // Its secrets went with it: the delete command carried none, and a shoot created again gets new ones.
    expect('secrets' in del.command).toBe(false);
    expect(await g.shootStates.load({ project: 'dev', name: 'api1' })).toBeUndefined();
  });

  it('refuses while a migration runs (409 MigrationInProgress)', async () => {
    const g = lifecycle();
    await placedShoot(g);
    await g.service.patchShoot('dev', 'api1', CONFIRM);
    const shoot = (await g.repo.getShoot('dev', 'api1'))!;
    await g.repo.updateShoot(
      { ...shoot, status: { ...shoot.status, migration: { id: 'm1', state: 'Running' } } },
      shoot.metadata.resourceVersion,
    );
    await expect(g.service.deleteShoot('dev', 'api1')).rejects.toMatchObject({ code: 'MigrationInProgress' });
  });
});

describe('pending shoots', () => {
  it('are placed when a seed becomes ready (the heartbeat after an expired lease publishes SeedReady), and their Create starts', async () => {
    // Prepare
    const g = lifecycle();
    await g.service.putSeed('seed-a', seedBody());
    const { resource } = await g.service.putShoot(
      'dev',
      'waiting',
      shootBody({ spec: { tolerations: [{ key: 'seed.gardener.cloud/protected' }] } }),
    );
    const first = await g.controller.placePendingShoots();
    // Act
    await g.service.heartbeat('seed-a', READY);
    const second = await g.controller.placePendingShoots();
    // Assess
    expect(resource.status.seedName).toBeUndefined();
    expect(first).toEqual({ placed: [], pending: 1 });
    expect(g.published.map((e) => e.type)).toContain('SeedReady');
    expect(second).toEqual({ placed: ['dev/waiting'], pending: 0 });
    const placed = (await g.repo.getShoot('dev', 'waiting'))!;
    expect(placed.status).toMatchObject({
      seedName: 'seed-a',
      lastOperation: { type: 'Create', state: 'Processing' },
      operation: { type: 'Create', seedName: 'seed-a' },
    });
    expect((await g.repo.getSeed('seed-a'))!.status.shoots).toBe(1);
    expect(g.started).toHaveLength(1);
  });

  it('keep their reasons without a new resourceVersion while nothing changed', async () => {
    const g = lifecycle();
    await g.service.putShoot('dev', 'waiting', shootBody());
    await g.controller.placePendingShoots();
    const version = (await g.repo.getShoot('dev', 'waiting'))!.metadata.resourceVersion;
    await g.controller.placePendingShoots();
    const shoot = (await g.repo.getShoot('dev', 'waiting'))!;
    expect(shoot.metadata.resourceVersion).toBe(version);
    expect(shoot.status.lastOperation).toMatchObject({
      type: 'Create',
      state: 'Pending',
      description: expect.stringContaining('Unschedulable'),
    });
  });

  it('a resync restarts an operation whose execution never started, once it is older than a minute', async () => {
    const g = lifecycle();
    await placedShoot(g);
    const early = await g.controller.resync();
    g.clock.advance(61_000);
    const late = await g.controller.resync();
    expect(early.restarted).toEqual([]);
    expect(late.restarted).toEqual(['dev/api1']);
  });
});
