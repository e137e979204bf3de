import { ConflictError, NotFoundError } from '../errors.js';
import type { Clock, EventSink } from '../garden/context.js';
import { isActive, tally, type Evacuation } from './record.js';
import type { EvacuationStore } from './store.js';

export type EvacuationControl = 'pause' | 'resume' | 'cancel';

const EVENT: Record<EvacuationControl, string> = {
  pause: 'EvacuationPaused',
  resume: 'EvacuationResumed',
  cancel: 'EvacuationCancelled',
};

/**
 * An operator's control, pure: pause (Running -> Paused), resume (Paused -> Running), cancel (Running or
 * Paused -> Cancelling, or Cancelled when no move is under way). Moves under way always finish: a bad-path
 * migration that began may have fenced its source already. Asking for the phase it is in changes nothing;
 * anything else is 409 `EvacuationNotControllable`.
 */
export function applyControl(
  record: Evacuation,
  control: EvacuationControl,
  options: { now: Date; by?: string },
): Evacuation | undefined {
  const target = control === 'pause' ? 'Paused' : control === 'resume' ? 'Running' : 'Cancelling';
  if (record.phase === target || (control === 'cancel' && record.phase === 'Cancelled')) return undefined;
  const allowed =
    control === 'pause'
      ? record.phase === 'Running'
      : control === 'resume'
        ? record.phase === 'Paused'
        : record.phase === 'Running' || record.phase === 'Paused';
  if (!allowed) {
    throw new ConflictError(
      `the evacuation of seed ${record.seed} is ${record.phase}: it cannot be ${control === 'pause' ? 'paused' : control === 'resume' ? 'resumed' : 'cancelled'}`,
      { code: 'EvacuationNotControllable', current: record },
    );
  }
  const at = options.now.toISOString();
  const by = options.by ? ` by ${options.by}` : '';
  const next: Evacuation = {
    ...structuredClone(record),
    phase: target,
    reason: `${control === 'pause' ? 'paused' : control === 'resume' ? 'resumed' : 'cancelled'}${by} at ${at}`,
    updatedAt: at,
    version: record.version + 1,
  };
  if (target === 'Cancelling' && tally(next).Migrating === 0) {
    next.phase = 'Cancelled';
    next.endedAt = at;
    delete next.held;
  }
  return next;
}

/** What the API and CLI do with evacuations: see them, pause, resume, cancel (conditional writes, retried on a concurrent round). */
export class EvacuationControls {
  constructor(
    private readonly options: { store: EvacuationStore; events: EventSink; clock: Clock; attempts?: number },
  ) {}

  async list(options: { active?: boolean } = {}): Promise<Evacuation[]> {
    const all = await this.options.store.list();
    return options.active ? all.filter(isActive) : all;
  }

  async get(seed: string): Promise<Evacuation> {
    const record = await this.options.store.get(seed);
    if (!record) throw new NotFoundError(`seed ${seed} has never been evacuated`);
    return record;
  }

  async control(seed: string, control: EvacuationControl, options: { by?: string } = {}): Promise<Evacuation> {
    const attempts = this.options.attempts ?? 5;
    for (let attempt = 1; ; attempt++) {
      const record = await this.get(seed);
      const next = applyControl(record, control, { now: this.options.clock.now(), ...options });
      if (!next) return record;
      try {
        await this.options.store.put(next, record.version);
      } catch (error) {
        if (error instanceof ConflictError && error.code === 'EvacuationChanged' && attempt < attempts) continue;
        throw error;
      }
      const counts = tally(next);
      await this.options.events.publish(EVENT[control], {
        seed,
        evacuationId: next.id,
        phase: next.phase,
        migrating: counts.Migrating,
        pending: counts.Pending,
        ...(options.by ? { by: options.by } : {}),
      });
      if (next.phase === 'Cancelled')
        await this.options.events.publish('EvacuationEnded', {
          seed,
          evacuationId: next.id,
          phase: next.phase,
          moved: counts.Moved,
          failed: counts.Failed,
          gone: counts.Gone,
          stayed: counts.Pending,
          reason: next.reason,
        });
      return next;
    }
  }
}
