import { createHash } from 'node:crypto';
import { buildCommand, commandShoot } from '../commands/build.js';
import { parseCommandSuccess } from '../commands/protocol.js';
import type { SeedCommand } from '../commands/schema.js';
import { ConflictError, DomainError, NotFoundError } from '../errors.js';
import {
  advertisedAddresses,
  apiDomainName,
  decideCreate,
  recordTargetFor,
  type ApiRecordOutcome,
  type ApiRecordWriter,
} from '../dns/index.js';
import { describeError } from '../migration/journal.js';
import type { Seed } from '../model/seed.js';
import { failureTolerance, type Shoot, type ShootOperation } from '../model/shoot.js';
import { OwnerRecordConflictError } from '../ownership/errors.js';
import type { OwnerRecords } from '../ownership/owner-records.js';
import type { ShootSecretsKeeper } from '../shootstate/secrets-keeper.js';
import type { ShootStateStore } from '../shootstate/store.js';
import { ownerRecordName } from '../ownership/record-name.js';
import type { Clock, EventSink } from './context.js';
import type { GardenRepository } from './repository.js';
import { HEALTH_ONLY } from './placement.js';
import {
  attemptStarted,
  currentOperation,
  migrationRunning,
  operationDropped,
  operationErrored,
  operationMoved,
  operationSucceeded,
  withOperation,
} from './shoot-operations.js';

/** Which operation an execution of operate-shoot works on. */
export interface OperationRef {
  project: string;
  name: string;
  operationId: string;
}

/** A migration holds the shoot: the state machine retries this step later (Retry on this error name). */
export class OperationBlockedError extends DomainError {
  constructor(message: string) {
    super(message, 'OperationBlocked');
    this.name = 'OperationBlocked';
  }
}

export interface ShootOperationStepsOptions {
  repo: GardenRepository;
  owners: OwnerRecords;
  internalDomain: string;
  events: EventSink;
  clock: Clock;
  /** The shoots' API records: set once a create (reconcile, wake) answers serving, removed by a delete. */
  apiRecords?: ApiRecordWriter;
  /**
   * The shoots' secrets: made at the first command and sent, sealed for the seed, with every command that
   * starts a control plane's components. Without it commands carry none (the agents then start none).
   */
  secrets?: ShootSecretsKeeper;
  /** Where the ShootState (secrets included) is kept: a deleted shoot's goes with it. */
  shootStates?: ShootStateStore;
  /** The deployment's external domain: commands name the shoot's API domain under it. */
  externalDomain?: string;
  /** What commands tell agents about their task's limits; the state machine's TimeoutSeconds and HeartbeatSeconds match. */
  commandTimeoutSeconds?: number;
  commandHeartbeatSeconds?: number;
}

export type DispatchOutcome =
  { superseded: true } | { superseded: false; command: SeedCommand; queueUrl: string; messageGroupId: string };

/**
 * The steps of the operate-shoot state machine: a lifecycle operation's command to the seed agent
 * (with the task token the machine waits on), and what its answer or failure does to the shoot. Every
 * step reads the shoot first and does nothing for an operation a newer one superseded; every write is
 * conditional on the version read.
 */
export class ShootOperationSteps {
  constructor(private readonly options: ShootOperationStepsOptions) {}

  /** The next attempt's command: for Create the owner record first (only if absent: a record naming another seed is a migration's). */
  async dispatch(ref: OperationRef): Promise<DispatchOutcome> {
    const { shoot, op } = await this.current(ref);
    if (!shoot || !op) return { superseded: true };
    if (migrationRunning(shoot))
      throw new OperationBlockedError(`a migration of ${ref.project}/${ref.name} runs; ${op.type} waits for it`);
    if (operationMoved(shoot, op)) {
      await this.followMove(shoot, op);
      return { superseded: true };
    }
    const seed = await this.options.repo.getSeed(op.seedName, HEALTH_ONLY);
    if (!seed) throw new NotFoundError(`seed ${op.seedName} of ${ref.project}/${ref.name} does not exist`);
    if (!seed.status.commandQueueUrl) throw new NotFoundError(`seed ${op.seedName} has no command queue`);
    if (op.type === 'Create')
      await this.options.owners.set({ name: this.recordName(shoot), value: seed.status.identity, expected: null });
    const started = await this.save(shoot, (s) => attemptStarted(s, this.options.clock.now()));
    const attempt = started.status.operation!.attempts;
    return {
      superseded: false,
      command: await this.command(started, seed, started.status.operation!, attempt),
      queueUrl: seed.status.commandQueueUrl,
      messageGroupId: shoot.status.technicalID,
    };
  }

  /**
   * The agent answered. Delete: the owner record goes (only if it still names this seed), then the shoot,
   * releasing its place on the seed in the same write. Otherwise lastOperation Succeeded.
   */
  async succeed(ref: OperationRef, output: unknown): Promise<{ state: 'Succeeded' | 'Superseded' }> {
    const { shoot, op } = await this.current(ref);
    if (!shoot || !op) return { state: 'Superseded' };
    // A migration moved the shoot while the command ran on the old seed: its answer says nothing about the new one.
    if (operationMoved(shoot, op)) {
      await this.followMove(shoot, op);
      return { state: 'Superseded' };
    }
    const type =
      op.type === 'Create' ? 'create-control-plane' : op.type === 'Delete' ? 'delete-control-plane' : 'reconcile';
    const answer = parseCommandSuccess(type, output);
    const summary = summarise(answer.result as Record<string, unknown>);
    const detail = {
      project: ref.project,
      shoot: ref.name,
      operationId: op.id,
      type: op.type,
      seedName: op.seedName,
      attempts: Math.max(1, op.attempts),
    };
    if (op.type === 'Delete') {
      const seed = await this.options.repo.getSeed(op.seedName, HEALTH_ONLY);
      await this.options.apiRecords?.remove({ shoot: { project: ref.project, name: ref.name }, seedName: op.seedName });
      if (seed) await this.removeOwnerRecord(shoot, seed);
      await this.options.repo.deleteShoot(ref.project, ref.name, shoot.metadata.resourceVersion);
      // Its secrets go with it: a shoot created again under the same name gets new ones.
      await this.options.shootStates?.delete({ project: ref.project, name: ref.name });
      await this.options.events.publish('ShootOperationSucceeded', {
        ...detail,
        description: `control plane deleted from seed ${op.seedName}: ${summary}`,
      });
      await this.options.events.publish('ShootDeleted', {
        project: ref.project,
        shoot: ref.name,
        seedName: op.seedName,
      });
      return { state: 'Succeeded' };
    }
    const externalUrl = (answer.result as { externalUrl?: string }).externalUrl;
    const api = await this.pointApiRecord(shoot, op, externalUrl);
    const described = api?.changed ? `${summary}; ${api.message}` : summary;
    // The record names this plane's load balancer: clients reach it under the API domain on that port.
    const advertised = api && externalUrl ? advertisedAddresses(api.record, externalUrl) : undefined;
    const done = await this.save(shoot, (s) => {
      const next = operationSucceeded(s, described, this.options.clock.now());
      return advertised ? { ...next, status: { ...next.status, advertisedAddresses: advertised } } : next;
    });
    await this.options.events.publish('ShootOperationSucceeded', {
      ...detail,
      description: done.status.lastOperation!.description,
    });
    return { state: 'Succeeded' };
  }

  /**
   * The answer says the control plane serves behind `externalUrl`: the API record points there. Only for
   * the seed the shoot is placed on and never while a migration runs (its switch step owns the record
   * then); a hibernated control plane names no address, so hibernation leaves the record as it is.
   */
  private async pointApiRecord(
    shoot: Shoot,
    op: ShootOperation,
    externalUrl: string | undefined,
  ): Promise<ApiRecordOutcome | undefined> {
    const writer = this.options.apiRecords;
    if (!writer || !externalUrl || migrationRunning(shoot) || shoot.status.seedName !== op.seedName) return undefined;
    const ref = { project: shoot.metadata.project, name: shoot.metadata.name };
    const decision = decideCreate({
      serving: { serving: true, seed: op.seedName, target: recordTargetFor(externalUrl), externalUrl },
      current: await writer.current(ref),
    });
    if (decision.action !== 'set' && decision.action !== 'done') return undefined;
    return writer.apply({ shoot: ref, decision, seedName: op.seedName });
  }

  /** An attempt failed (the agent's SendTaskFailure, a timeout, a dispatch error): Error and a retry delay, or Failed. */
  async fail(ref: OperationRef, error: unknown): Promise<{ retry: boolean; waitSeconds: number; superseded: boolean }> {
    const { shoot, op } = await this.current(ref);
    if (!shoot || !op) return { retry: false, waitSeconds: 0, superseded: true };
    if (operationMoved(shoot, op)) {
      await this.followMove(shoot, op);
      return { retry: false, waitSeconds: 0, superseded: true };
    }
    const message = describeError(error);
    let retryInSeconds: number | undefined;
    const failed = await this.save(shoot, (s) => {
      const next = operationErrored(s, message, this.options.clock.now());
      retryInSeconds = next.retryInSeconds;
      return next.shoot;
    });
    const detail = {
      project: ref.project,
      shoot: ref.name,
      operationId: op.id,
      type: op.type,
      seedName: op.seedName,
      attempts: Math.max(1, failed.status.operation!.attempts),
      error: message,
    };
    if (retryInSeconds === undefined) {
      await this.options.events.publish('ShootOperationFailed', detail);
      return { retry: false, waitSeconds: 0, superseded: false };
    }
    await this.options.events.publish('ShootOperationErrored', { ...detail, retryInSeconds });
    return { retry: true, waitSeconds: retryInSeconds, superseded: false };
  }

  /**
   * A migration moved the shoot off the seed the operation was requested on (it waited for the migration,
   * or its command ran on the old seed meanwhile). A Create is done: the migration restored the control
   * plane on its new seed, and the old seed's agent releases its leftover. Any other operation is requested
   * again on the new seed, as a new operation (its id follows from the old one and the seed, so a retry of
   * this step names the same); the lifecycle controller starts it.
   */
  private async followMove(shoot: Shoot, op: ShootOperation): Promise<void> {
    const seedName = shoot.status.seedName;
    if (op.type === 'Create' || seedName === undefined) {
      await this.save(shoot, operationDropped);
      return;
    }
    const id = `${op.id.slice(0, 36)}-on-${createHash('sha256').update(`${op.id}/${seedName}`).digest('hex').slice(0, 12)}`;
    await this.save(shoot, (s) => withOperation(s, { type: op.type, id, now: this.options.clock.now() }));
    await this.options.events.publish('ShootOperationRequested', {
      project: shoot.metadata.project,
      shoot: shoot.metadata.name,
      operationId: id,
      type: op.type,
      seedName,
    });
  }

  private async command(shoot: Shoot, seed: Seed, op: ShootOperation, attempt: number): Promise<SeedCommand> {
    const address = {
      shoot: commandShoot(shoot),
      seed: seed.metadata.name,
      commandId: `op/${op.id}/${attempt}`,
      issuedAt: this.options.clock.now(),
      timeoutSeconds: this.options.commandTimeoutSeconds ?? 300,
      heartbeatSeconds: this.options.commandHeartbeatSeconds ?? 60,
    };
    if (op.type === 'Delete') {
      return buildCommand<'delete-control-plane'>(address, {
        type: 'delete-control-plane',
        keepBackups: true,
        keepExternalResources: false,
      });
    }
    if (!seed.spec.backup)
      throw new NotFoundError(
        `seed ${seed.metadata.name} has no backup bucket: the control plane's etcd could not be backed up`,
      );
    const tolerance = failureTolerance(shoot.spec);
    const controlPlane = {
      hibernated: shoot.spec.hibernation?.enabled === true,
      ...(tolerance ? { failureTolerance: tolerance } : {}),
      backup: {
        bucket: seed.spec.backup.bucket,
        ...(seed.spec.backup.region ? { region: seed.spec.backup.region } : {}),
      },
    };
    const secrets = await this.options.secrets?.forSeed(commandShoot(shoot), seed.metadata.name);
    const domain = this.options.externalDomain;
    const body = {
      controlPlane,
      ...(secrets ? { secrets } : {}),
      ...(domain
        ? {
            apiDomain: apiDomainName({
              shoot: shoot.metadata.name,
              project: shoot.metadata.project,
              externalDomain: domain,
            }),
          }
        : {}),
    };
    return op.type === 'Create'
      ? buildCommand<'create-control-plane'>(address, { type: 'create-control-plane', ...body })
      : buildCommand<'reconcile'>(address, { type: 'reconcile', ...body });
  }

  private async current(ref: OperationRef): Promise<{ shoot: Shoot | undefined; op: ShootOperation | undefined }> {
    const shoot = await this.options.repo.getShoot(ref.project, ref.name);
    return { shoot, op: currentOperation(shoot, ref.operationId) };
  }

  /** A conditional write of the shoot; a concurrent change (the API, a migration's mirror) is read again, unless it superseded the operation. */
  private async save(shoot: Shoot, change: (s: Shoot) => Shoot): Promise<Shoot> {
    let current = shoot;
    const id = shoot.status.operation!.id;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.options.repo.updateShoot(change(current), current.metadata.resourceVersion);
      } catch (error) {
        if (!(error instanceof ConflictError) || attempt >= 8) throw error;
        const fresh = await this.options.repo.getShoot(shoot.metadata.project, shoot.metadata.name);
        if (!fresh || currentOperation(fresh, id) === undefined)
          throw new ConflictError(
            `operation ${id} of ${shoot.metadata.project}/${shoot.metadata.name} was superseded`,
            { code: 'Superseded', cause: error },
          );
        current = fresh;
      }
    }
  }

  /** Only a record naming this seed goes: one naming another seed is not this deletion's to remove. */
  private async removeOwnerRecord(shoot: Shoot, seed: Seed): Promise<void> {
    try {
      await this.options.owners.delete({ name: this.recordName(shoot), expected: seed.status.identity });
    } catch (error) {
      if (!(error instanceof OwnerRecordConflictError)) throw error;
    }
  }

  private recordName(shoot: Shoot): string {
    return ownerRecordName({
      shoot: shoot.metadata.name,
      project: shoot.metadata.project,
      internalDomain: this.options.internalDomain,
    });
  }
}

function summarise(result: Record<string, unknown>): string {
  if (typeof result.deleted === 'boolean')
    return result.deleted ? 'etcd stopped, data removed, backups kept' : 'nothing was left to delete';
  const extensions = Array.isArray(result.extensions) ? result.extensions.length : 0;
  return `${extensions} extensions, etcd ${result.etcdReady ? 'ready' : 'stopped'}`;
}
