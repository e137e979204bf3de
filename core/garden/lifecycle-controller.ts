import { createHash } from 'node:crypto';
import type { Shoot } from '../model/shoot.js';
import type { Clock, EventSink } from './context.js';
import { listAllShoots } from './listing.js';
import { placePending, type SchedulingPolicy } from './placement.js';
import type { GardenRepository } from './repository.js';
import { deleting } from './shoot-operations.js';
import type { OperationRef } from './operation-steps.js';

/** The operate-shoot state machine, as the controller starts it: a repeated start of one name is a no-op. */
export interface OperationWorkflow {
  start(options: { name: string; input: { ref: OperationRef } }): Promise<void>;
}

/** An operation whose events were lost is started again by the periodic resync after this long without an attempt. */
export const RESYNC_AFTER_MS = 60_000;

/**
 * The garden's shoot lifecycle controller (gardenlet's shoot controller, event-driven): a requested
 * operation gets its operate-shoot execution; pending shoots are placed when seeds become ready, are
 * registered or free a place, and on every resync tick (the retry with backoff for shoots that fit
 * nowhere yet); a resync also restarts operations whose execution never started.
 */
export class LifecycleController {
  constructor(
    private readonly options: {
      repo: GardenRepository;
      workflow: OperationWorkflow;
      events: EventSink;
      clock: Clock;
      policy?: SchedulingPolicy;
    },
  ) {}

  /** The shoot's current operation runs (idempotent: one execution name per operation). */
  async ensureOperation(project: string, name: string): Promise<{ started?: string }> {
    const shoot = await this.options.repo.getShoot(project, name);
    const op = shoot?.status.operation;
    if (!shoot || !op || shoot.status.lastOperation?.state !== 'Processing' || op.attempts > 0) return {};
    await this.options.workflow.start({
      name: executionName(shoot),
      input: { ref: { project, name, operationId: op.id } },
    });
    return { started: op.id };
  }

  /** Every pending shoot the scheduler can place now is placed, and its Create starts. */
  async placePendingShoots(listed?: readonly Shoot[]): Promise<{ placed: string[]; pending: number }> {
    const placed: string[] = [];
    let pending = 0;
    for (const shoot of listed ?? (await listAllShoots(this.options.repo))) {
      if (shoot.status.seedName || deleting(shoot)) continue;
      const outcome = await placePending({
        repo: this.options.repo,
        shoot,
        policy: this.options.policy ?? {},
        now: this.options.clock.now(),
      });
      const { project, name } = shoot.metadata;
      if (!outcome.placed) {
        pending++;
        continue;
      }
      placed.push(`${project}/${name}`);
      await this.options.events.publish('ShootScheduled', {
        project,
        shoot: name,
        seedName: outcome.shoot.status.seedName!,
        summary: outcome.result.summary,
      });
      await this.ensureOperation(project, name);
    }
    return { placed, pending };
  }

  /** The periodic tick: pending shoots, then operations requested a while ago that never got an attempt. */
  async resync(): Promise<{ placed: string[]; pending: number; restarted: string[] }> {
    // One listing for both passes: a shoot placed by the first has its operation started there already.
    const shoots = await listAllShoots(this.options.repo);
    const placement = await this.placePendingShoots(shoots);
    const restarted: string[] = [];
    const now = this.options.clock.now().getTime();
    for (const shoot of shoots) {
      const op = shoot.status.operation;
      if (!op || op.attempts > 0 || shoot.status.lastOperation?.state !== 'Processing') continue;
      if (now - Date.parse(op.requestedAt) < RESYNC_AFTER_MS) continue;
      const { started } = await this.ensureOperation(shoot.metadata.project, shoot.metadata.name);
      if (started) restarted.push(`${shoot.metadata.project}/${shoot.metadata.name}`);
    }
    return { ...placement, restarted };
  }
}

/** Step Functions names: at most 80 characters of [A-Za-z0-9-_]; the operation id is hashed to fit. */
export function executionName(shoot: Shoot): string {
  const op = shoot.status.operation!;
  const hash = createHash('sha256').update(op.id).digest('hex').slice(0, 16);
  return `${shoot.status.technicalID.slice(0, 50)}-${op.type.toLowerCase()}-${hash}`
    .replace(/[^A-Za-z0-9_-]/g, '-')
    .slice(0, 80);
}
