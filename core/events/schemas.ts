import { z } from 'zod';

/**
 * The events on the bus (source `gardenless`), one zod schema per detail type. The EventBridge sink
 * builds every event through these (an event that does not fit is not published), and
 * `npm run events` writes them as JSON Schemas into docs/events/ for subscribers.
 * Objects are open: fields may be added, never removed or retyped.
 */
const name = z.string().min(1).max(63);
const shootRef = { project: name, shoot: name };
const migrationRef = { ...shootRef, migrationId: z.string().min(1).max(128) };
const operation = z.enum(['Create', 'Reconcile', 'Hibernate', 'Wake', 'Delete']);
const seconds = z.number().min(0).describe("Seconds from the migration's admission to this event.");

export const EVENT_SCHEMAS = {
  SeedRegistered: z
    .looseObject({ seed: name, identity: z.string().min(1) })
    .describe('A seed was registered; identity is what owner records will name.'),
  SeedDeleted: z.looseObject({ seed: name }).describe('A seed was deleted.'),
  SeedDeprovisionFailed: z
    .looseObject({ seed: name, error: z.string() })
    .describe("A deleted seed's command queue could not be removed."),
  SeedLeaseLost: z
    .looseObject({
      seed: name,
      lastRenewTime: z.string().optional(),
      expiredAt: z.string().optional().describe('When the lease ran out: its last renewal plus its duration.'),
      leaseDurationSeconds: z.number().int().min(1).optional(),
    })
    .describe(
      'A seed agent stopped renewing its lease: published once per loss by the lease monitor (a loss ends with the next heartbeat); the alarm SeedLeaseLost watches the metric of the same name.',
    ),
  SeedReady: z
    .looseObject({ seed: name, identity: z.string().min(1) })
    .describe(
      'A seed agent renewed a lease that had expired or never existed: the seed can host shoots again (pending shoots are placed).',
    ),
  LeftoverReleased: z
    .looseObject({ seed: name, technicalID: name, reason: z.string() })
    .describe(
      'A heartbeat told a seed agent to remove a control plane it no longer owns (the agent checks the owner record once more first).',
    ),
  ShootOperationRequested: z
    .looseObject({ ...shootRef, operationId: z.string().min(1).max(128), type: operation, seedName: name.nullable() })
    .describe("A lifecycle operation (Create, Reconcile, Hibernate, Wake, Delete) was requested on the shoot's seed."),
  ShootOperationSucceeded: z
    .looseObject({
      ...shootRef,
      operationId: z.string().min(1).max(128),
      type: operation,
      seedName: name,
      attempts: z.number().int().min(1),
      description: z.string(),
    })
    .describe("The seed agent answered a lifecycle operation's command: lastOperation Succeeded."),
  ShootOperationErrored: z
    .looseObject({
      ...shootRef,
      operationId: z.string().min(1).max(128),
      type: operation,
      seedName: name,
      attempts: z.number().int().min(1),
      retryInSeconds: z.number().int().min(0),
      error: z.string(),
    })
    .describe('An attempt of a lifecycle operation failed; it is retried (lastOperation Error).'),
  ShootOperationFailed: z
    .looseObject({
      ...shootRef,
      operationId: z.string().min(1).max(128),
      type: operation,
      seedName: name,
      attempts: z.number().int().min(1),
      error: z.string(),
    })
    .describe(
      'A lifecycle operation failed on its last attempt (lastOperation Failed); a new change or deletion starts a new one.',
    ),
  ShootCreated: z
    .looseObject({ ...shootRef, seedName: name.nullable() })
    .describe('A shoot was created; seedName is null when no seed could host it.'),
  ShootScheduled: z
    .looseObject({ ...shootRef, seedName: name, summary: z.string() })
    .describe('The scheduler placed a new shoot.'),
  ShootUnschedulable: z
    .looseObject({ ...shootRef, seedName: z.null(), summary: z.string() })
    .describe('No seed can host a new shoot (stored unscheduled).'),
  ShootDeleted: z
    .looseObject({ ...shootRef, seedName: name.nullable() })
    .describe('A shoot was deleted and its place freed.'),
  MigrationStarted: z
    .looseObject({
      ...migrationRef,
      source: name,
      destination: name,
      mode: z.enum(['auto', 'good', 'bad', 'live']),
      resumed: z.boolean(),
      resumeFrom: z.string(),
    })
    .describe('A migration was admitted (or resumed) and its state machine started.'),
  OwnershipTransferred: z
    .looseObject({ ...migrationRef, from: name, to: name, record: z.string() })
    .describe('The owner record names the destination now: the source fences itself.'),
  ApiRecordChanged: z
    .looseObject({
      ...shootRef,
      migrationId: z.string().min(1).max(128).optional(),
      record: z.string(),
      seedName: name.nullable(),
      from: z
        .string()
        .nullable()
        .describe('The target before (`A 10.0.0.7`, `CNAME lb.example`), null when there was none.'),
      to: z.string().nullable().describe('The target now, null when the record was deleted.'),
      reason: z.string(),
    })
    .describe(
      "The shoot's API record changed: created once its control plane served, switched to a migration's destination once it served, or deleted.",
    ),
  SnapshotsCopied: z
    .looseObject({
      ...migrationRef,
      copied: z.number().int().min(0).optional(),
      skipped: z.number().int().min(0).optional(),
      bytes: z.number().min(0).optional(),
      finalFound: z.boolean().optional(),
      lastRevision: z.number().int().min(0).optional(),
    })
    .describe(
      "The snapshots were copied into the destination's bucket; finalFound false means the latest, not a final, snapshot.",
    ),
  MigrationSucceeded: z
    .looseObject({
      ...migrationRef,
      source: name,
      destination: name,
      path: z.enum(['good', 'bad', 'live']).optional(),
      switchedToBadPath: z.boolean(),
      durationSeconds: seconds.optional(),
    })
    .describe('The shoot runs on the destination; the migration lock is released.'),
  MigrationSwitchedToBadPath: z
    .looseObject({
      ...migrationRef,
      failedStep: z.string(),
      reason: z.string(),
      early: z
        .boolean()
        .describe(
          "True when the source's lease had expired (SourceLeaseExpired): the flow did not wait for the command timeout.",
        ),
    })
    .describe(
      "A good-path step gave up (timeout, failure, or the source's lease expired in mode auto); the migration continues on the bad path.",
    ),
  MigrationFailed: z
    .looseObject({
      ...migrationRef,
      step: z.string(),
      error: z.string().optional(),
      durationSeconds: seconds.optional(),
    })
    .describe('A migration ended in Error at step; calling migrate again resumes it.'),
  SplitBrainSuspected: z
    .looseObject({
      ...shootRef,
      technicalID: z.string(),
      recordName: z.string(),
      seedName: name.nullable(),
      expectedIdentity: z.string().nullable(),
      ownerRecord: z.string().nullable(),
      activeOn: z.array(z.string()),
      consistent: z.literal(false),
      reason: z.string(),
      message: z.string(),
      detectedAt: z.string(),
    })
    .describe(
      'The ownership audit found owner record, placement and heartbeats disagreeing (for example two seeds serving one control plane).',
    ),
  ...evacuationEvents(),
  DependentsScaledDown: watchdogEvent(
    'The dependency watchdog scaled the controllers to 0: internal probe up, external down.',
  ),
  DependentsScaledUp: watchdogEvent(
    'The dependency watchdog restored the remembered replicas: external probe up again.',
  ),
  DependentsRestarted: watchdogEvent('The weeder restarted crash-looping dependents after their dependency recovered.'),
} as const;

/** Evacuation of a seed whose lease is lost (docs/design.md section 13). */
function evacuationEvents() {
  const evacuation = { seed: name, evacuationId: z.string().min(1).max(128) };
  const phase = z.enum(['Running', 'Paused', 'Cancelling', 'Stopping', 'Completed', 'Cancelled', 'Stopped']);
  const count = z.number().int().min(0);
  const control = (description: string) =>
    z
      .looseObject({ ...evacuation, phase, migrating: count, pending: count, by: z.string().optional() })
      .describe(description);
  return {
    EvacuationStarted: z
      .looseObject({ ...evacuation, lostSince: z.string(), shoots: count, maxParallel: z.number().int().min(1) })
      .describe(
        'A seed that opted in had lost its lease for `after`: the garden starts moving its shoots (bad path), at most maxParallel of them holding a place at a time.',
      ),
    EvacuationShootStarted: z
      .looseObject({
        ...evacuation,
        ...shootRef,
        destination: name,
        migrationId: z.string().min(1).max(128),
        resumed: z.boolean(),
      })
      .describe(
        'An evacuation started (or resumed) the migration of one shoot to the destination the scheduler chose.',
      ),
    EvacuationShootEnded: z
      .looseObject({
        ...evacuation,
        ...shootRef,
        outcome: z.enum(['Moved', 'Failed', 'Gone']),
        reason: z.string(),
        destination: name.optional(),
        migrationId: z.string().optional(),
      })
      .describe(
        'One shoot of an evacuation is settled: Moved (its migration succeeded), Failed (its migration ended in Error too often), Gone (deleted or moved by someone else).',
      ),
    EvacuationHeld: z
      .looseObject({ ...evacuation, reason: z.string() })
      .describe(
        'Too many seeds lost their lease together: the evacuation starts no new move until enough of them are back.',
      ),
    EvacuationPaused: control('An operator paused the evacuation: no new move starts; moves under way finish.'),
    EvacuationDue: z
      .looseObject({ seed: name, dueAt: z.string() })
      .describe(
        "A lost seed's evacuation is due (`after` has passed since its lease ran out): put by the evacuation-due state machine, it wakes the evacuation controller at that moment rather than at its next one-minute round.",
      ),
    EvacuationResumed: control('An operator resumed a paused evacuation.'),
    EvacuationCancelled: control(
      'An operator cancelled the evacuation: no new move starts; moves under way finish, then it ends Cancelled.',
    ),
    EvacuationEnded: z
      .looseObject({
        ...evacuation,
        phase,
        moved: count,
        failed: count,
        gone: count,
        stayed: count,
        reason: z.string().optional(),
      })
      .describe(
        'The evacuation ended: Completed (every shoot settled), Cancelled, or Stopped (the seed renewed its lease; the shoots that stayed run on it).',
      ),
  };
}

function watchdogEvent(description: string) {
  return z
    .looseObject({
      ...shootRef,
      seedName: name,
      type: z.enum(['Normal', 'Warning']),
      message: z.string(),
      subjects: z.array(z.string()),
    })
    .describe(description);
}

export type EventType = keyof typeof EVENT_SCHEMAS;
export const EVENT_TYPES = Object.keys(EVENT_SCHEMAS) as EventType[];

/** The error of an event that does not fit its schema (a bug in the publisher), named for the logs. */
export class InvalidEventError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'InvalidEventError';
  }
}

/** The event's detail as its schema builds it; InvalidEventError for an unknown type or a detail that does not fit. */
export function buildEvent(detailType: string, detail: Record<string, unknown>): Record<string, unknown> {
  const schema = (EVENT_SCHEMAS as Record<string, z.ZodType<Record<string, unknown>>>)[detailType];
  if (!schema) throw new InvalidEventError(`unknown event type ${detailType}`);
  const parsed = schema.safeParse(detail);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidEventError(
      `event ${detailType}: ${issue?.path.join('.') || 'detail'}: ${issue?.message ?? 'invalid'}`,
      { cause: parsed.error },
    );
  }
  return parsed.data;
}

/** One JSON Schema (draft 2020-12) per event: the `detail` of an EventBridge event with that detail type. */
export function eventJsonSchemas(): Record<EventType, Record<string, unknown>> {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => {
      const { $schema, ...rest } = z.toJSONSchema(EVENT_SCHEMAS[type], {
        target: 'draft-2020-12',
        io: 'input',
      }) as Record<string, unknown>;
      return [
        type,
        {
          $schema,
          $id: `https://gardenless.io/schemas/events/${type}.schema.json`,
          title: `${type} (source gardenless, detail-type ${type})`,
          ...rest,
        },
      ];
    }),
  ) as unknown as Record<EventType, Record<string, unknown>>;
}
