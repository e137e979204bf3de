import { z } from 'zod';
import { SCALE_DOWN_ORDER, WEEDER_DEPENDENCIES } from '../dwd/components.js';
import { EXTENSION_KINDS } from '../extensions/resource.js';
import { dns1123Label as dns1123 } from '../model/names.js';
import { sealedSecretsSchema } from '../shootstate/sealed.js';
import { packedShootStateSchema, shootRefSchema } from '../shootstate/schema.js';

/**
 * The seed command protocol, version 1: what the garden sends a seed agent over the seed's SQS queue,
 * and what the agent answers through the Step Functions task APIs. docs/command-protocol.md explains it;
 * docs/command-protocol.schema.json is generated from these schemas (scripts/command-protocol.ts).
 */
export const COMMAND_API_VERSION = 'commands.gardenless.io/v1';

/** Names in the generated JSON Schema document. Kept in a private registry so they never clash with others. */
export const protocolRegistry = z.registry<{ id: string; description?: string }>();
function named<T extends z.ZodType>(schema: T, id: string, description: string): T {
  protocolRegistry.add(schema, { id, description });
  return schema;
}

const timestamp = z.string().datetime();

export const commandIdSchema = named(
  z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]*$/, 'letters, digits and . _ : / - only'),
  'CommandId',
  'Identifies the intent, not the delivery: a redelivered or retried command carries the same id, and the agent executes it at most once (answering repeats with the first outcome). The garden builds it as <migrationId>/<stepId> (or <origin>/<uuid>).',
);

named(
  packedShootStateSchema,
  'PackedShootState',
  'A ShootState as persisted: each extension state inline or, above 100 KB (or over the inline budget), a reference to a blob in the state bucket verified by its sha256.',
);

export const commandShootSchema = named(
  shootRefSchema,
  'ShootRef',
  'The shoot the command is about; technicalID is its namespace on the seed.',
);

const envelope = {
  apiVersion: z.literal(COMMAND_API_VERSION),
  commandId: commandIdSchema,
  shoot: commandShootSchema,
  /** The seed the command is addressed to; an agent refuses commands for another seed (a misrouted message). */
  seed: dns1123,
  /** Present when a Step Functions task waits for the answer (`.waitForTaskToken`); absent for fire-and-forget commands. */
  taskToken: z.string().min(1).max(1024).optional(),
  issuedAt: timestamp,
  /** How often the agent must call SendTaskHeartbeat while working; the task's HeartbeatSeconds is larger. */
  heartbeatSeconds: z.number().int().min(1).max(3600).optional(),
  /** The task's TimeoutSeconds: after this the garden has moved on, and the agent may stop. */
  timeoutSeconds: z.number().int().min(1).max(86_400).optional(),
  /** The migration this command belongs to, for logs and events. */
  migrationId: z.string().min(1).max(128).optional(),
};

const shootSecrets = named(
  sealedSecretsSchema,
  'SealedShootSecrets',
  "The shoot's secrets (cluster CA, client CA, ServiceAccount key, etcd encryption key) for this seed: AES-256-GCM under a data key that KMS wrapped with the context {gardenless:shoot, gardenless:seed}; only this seed's agent may unwrap it. Sent with every command that starts the control plane's components.",
);

/** The shoot's API domain: its kube-apiserver's name (serving certificate, ServiceAccount issuer, the load balancer's route). */
const apiDomain = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/, 'must be a DNS name');

const extensionSpec = z
  .object({
    kind: z.enum(EXTENSION_KINDS),
    name: z.string().min(1).max(253),
    purpose: z.string().min(1).max(63).optional(),
    spec: z.record(z.string(), z.unknown()),
  })
  .strict();

const controlPlaneSpec = named(
  z
    .object({
      hibernated: z.boolean(),
      failureTolerance: z.enum(['node', 'zone']).optional(),
      /** The seed's backup bucket, where the sidecar writes this shoot's snapshots. */
      backup: z.object({ bucket: z.string().min(3).max(63), region: z.string().max(63).optional() }).strict(),
      /** The extension resources to create or reconcile; absent: the runtime's defaults. */
      extensions: z.array(extensionSpec).max(64).optional(),
    })
    .strict(),
  'ControlPlaneSpec',
  'What a control plane on the seed should look like.',
);

export const createControlPlaneCommand = named(
  z
    .object({
      ...envelope,
      type: z.literal('create-control-plane'),
      controlPlane: controlPlaneSpec,
      secrets: shootSecrets.optional(),
      apiDomain: apiDomain.optional(),
    })
    .strict(),
  'CreateControlPlaneCommand',
  'Create the control plane (etcd with its sidecar, the components, the extension resources). Creating what exists is a reconcile.',
);

export const reconcileCommand = named(
  z
    .object({
      ...envelope,
      type: z.literal('reconcile'),
      controlPlane: controlPlaneSpec,
      secrets: shootSecrets.optional(),
      apiDomain: apiDomain.optional(),
    })
    .strict(),
  'ReconcileCommand',
  'Bring an existing control plane to the spec; never scales up a component the dependency watchdog holds down.',
);

export const migrateCommand = named(
  z
    .object({
      ...envelope,
      type: z.literal('migrate'),
      /** Where the agent writes extension states above the blob threshold (the garden's state bucket). */
      stateBucket: z.string().min(3).max(63),
      /** Inline states together stay below this in the answer; the largest go to the bucket first. */
      inlineBudgetBytes: z
        .number()
        .int()
        .min(0)
        .max(200 * 1024)
        .optional(),
    })
    .strict(),
  'MigrateCommand',
  'Annotate every extension resource with gardener.cloud/operation=migrate and run the migrate operations (external resources stay); answer with the collected ShootState.',
);

export const deleteControlPlaneCommand = named(
  z
    .object({
      ...envelope,
      type: z.literal('delete-control-plane'),
      /** The backups stay in the bucket: the destination restores from copies of them. */
      keepBackups: z.literal(true),
      /**
       * true after a migration or for a leftover: extension resources are dropped without deleting the
       * cloud resources (they moved with the shoot). false for a shoot's deletion: they are deleted.
       */
      keepExternalResources: z.boolean(),
      /**
       * Only if this seed's owner check says `not-owner` right now (a leftover the garden released): the
       * agent refuses (OwnerCheckFailed) when it owns the shoot or cannot tell.
       */
      ifNotOwner: z.boolean().optional(),
    })
    .strict(),
  'DeleteControlPlaneCommand',
  "Remove the control plane from this seed (after a migration, for a leftover, or for the shoot's deletion): stop and remove etcd and the components, drop or delete the extension resources; backups always stay. Deleting what is gone succeeds.",
);

export const restoreCommand = named(
  z
    .object({
      ...envelope,
      type: z.literal('restore'),
      hibernated: z.boolean(),
      controlPlane: controlPlaneSpec.optional(),
      /** The shoot's secrets, for the components that start once etcd is restored (restore-etcd only). */
      secrets: shootSecrets.optional(),
      apiDomain: apiDomain.optional(),
      /** Restore etcd from the snapshots copied into this seed's backup bucket. */
      etcd: z
        .object({
          bucket: z.string().min(3).max(63),
          /** The revision the copied snapshots must reach (the final snapshot's), when known. */
          expectedLastRevision: z.number().int().min(0).optional(),
          /** Whether the copy contains the source's final snapshot (false after a copy timeout). */
          final: z.boolean(),
          /**
           * Restore ahead (pre-copy, docs/design.md section 5): restore etcd from what the bucket holds now and
           * keep it unserved (private address, no owner check, no snapshots) until this migration's normal
           * restore arrives, which then only catches up and serves once the owner record names this seed.
           * Sent while the source may still serve, so never with expectedLastRevision and never final.
           */
          ahead: z.boolean().optional(),
          /**
           * The operator's override (docs/design.md section 4, "Fidelity"): serve the restored etcd even where its
           * key-space digest differs from the one the source's snapshot names. Only on the restore that serves,
           * never ahead: a migration resumed with the override sends it.
           */
          acceptDigestMismatch: z.boolean().optional(),
        })
        .strict()
        .refine((e) => e.ahead !== true || (e.expectedLastRevision === undefined && !e.final), {
          message: 'a restore ahead is of what the bucket holds now: no expectedLastRevision, final false',
          path: ['ahead'],
        })
        .refine((e) => e.ahead !== true || e.acceptDigestMismatch !== true, {
          message: 'a restore ahead serves nothing: it takes no override of the fidelity check',
          path: ['acceptDigestMismatch'],
        })
        .optional(),
      /** Restore the extensions from the ShootState (operation restore; the annotation is removed when each succeeds). */
      extensions: z
        .object({
          shootState: packedShootStateSchema,
          shootStateVersion: z.number().int().min(0),
          stateBucket: z.string().min(3).max(63),
        })
        .strict()
        .optional(),
    })
    .strict()
    .refine((c) => c.etcd !== undefined || c.extensions !== undefined, {
      message: 'a restore needs etcd, extensions or both',
      path: ['etcd'],
    }),
  'RestoreCommand',
  'Restore the control plane on the destination: etcd from the copied snapshots, then the extensions from the ShootState. Only while this seed owns the shoot (owner record); a restore ahead (etcd.ahead) excepted, which never serves.',
);

export const scaleCommand = named(
  z
    .object({
      ...envelope,
      type: z.literal('scale'),
      component: z.enum(SCALE_DOWN_ORDER),
      replicas: z.number().int().min(0).max(100),
      reason: z.string().max(1024).optional(),
    })
    .strict(),
  'ScaleCommand',
  'Set the replicas of one control-plane deployment (dependency-watchdog prober).',
);

export const restartCommand = named(
  z
    .object({
      ...envelope,
      type: z.literal('restart'),
      pod: z.string().min(1).max(253),
      dependency: z.enum(WEEDER_DEPENDENCIES),
    })
    .strict(),
  'RestartCommand',
  'Delete (and so restart) one crash-looping pod whose dependency recovered (dependency-watchdog weeder).',
);

export const checkOwnerCommand = named(
  z
    .object({
      ...envelope,
      type: z.literal('check-owner'),
      /** What the garden did to the owner record, for the agent's log; the sidecars look the record up themselves. */
      change: z.enum(['deleted', 'set']),
    })
    .strict()
    // Never answered: the garden does not wait for a seed it may not reach (the bad path).
    .refine((c) => c.taskToken === undefined, {
      message: 'a check-owner notice is never answered: it carries no task token',
      path: ['taskToken'],
    }),
  'CheckOwnerCommand',
  "An owner-change notice, fire-and-forget: the garden changed this shoot's owner record; the agent asks every sidecar of the shoot to check the record now instead of at its next poll. It carries no result and decides nothing: the check does. Duplicates and late ones are harmless.",
);

export const handOverCommand = named(
  z
    .object({
      ...envelope,
      type: z.literal('hand-over'),
      /** The shoot's API domain: the name its clients ask this seed's load balancer for. */
      apiDomain,
      /** The load balancer the API record names now (the destination's), as `https://<host>:<port>`. */
      target: z
        .string()
        .max(300)
        .regex(/^https:\/\/[^/\s]+:\d{1,5}$/, 'must be https://<host>:<port>'),
      /** Until when resolvers may still answer this seed's address for the API domain. */
      until: timestamp,
    })
    .strict()
    .refine((c) => c.taskToken === undefined, {
      message: 'a hand-over notice is never answered: it carries no task token',
      path: ['taskToken'],
    }),
  'HandOverCommand',
  "A hand-over notice, fire-and-forget: the garden switched this shoot's API record away from this seed. Until `until`, this seed's load balancer passes new connections for `apiDomain` on to `target` untouched (TLS end to end; the target's load balancer admits them only while its control plane serves), so that a client whose resolver still answers the old address reaches the shoot where it serves now. A route of a control plane that serves here again takes precedence. Duplicates and late ones are harmless.",
);

const etcdUrl = z
  .string()
  .max(300)
  .regex(/^http:\/\/[^/\s]+:\d{1,5}$/, 'must be http://<host>:<port>');
const seedIdentity = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'must be a seed identity (a DNS label and a UUID)');
/** A peer URL is https where the members speak mutual TLS with the shoot's etcd peer CA. */
const etcdPeerUrl = z
  .string()
  .max(300)
  .regex(/^https?:\/\/[^/\s]+:\d{1,5}$/, 'must be http(s)://<host>:<port>');
/** One member of the shoot's etcd cluster as the walk plans it. */
const walkMember = z.object({ name: z.string().min(1).max(128), peerUrl: etcdPeerUrl, clientUrl: etcdUrl }).strict();
/** What a walk is of, fixed when it begins: the cluster and the source's members then. */
const liveWalkSpec = named(
  z
    .object({
      cluster: z.string().regex(/^[0-9a-f]{1,20}$/, "must be etcd's cluster ID in lower-case hex"),
      sourceMembers: z.array(walkMember).min(1).max(7),
    })
    .strict(),
  'LiveWalkSpec',
  "The shoot's etcd cluster a live walk moves (etcd's cluster ID, hex) and the members it had on the source when the walk began.",
);

export const liveWalkCommand = named(
  z
    .object({
      ...envelope,
      type: z.literal('live-walk'),
      /** The source seed: its identity, and where the shoot's etcd serves there (its heartbeat's etcdClientUrl). */
      source: z.object({ identity: seedIdentity, clientUrls: z.array(etcdUrl).min(1).max(7) }).strict(),
      /** This seed's identity (the owner record's value once the walk completes). */
      destination: z.object({ identity: seedIdentity }).strict(),
      /** The owner record's value as the garden last wrote it (`<identity>` or `<origin>+<destination>@<cluster>`). */
      owner: z.string().min(1).max(255),
      /** Absent on the first round, which reads it from the source and answers it; every later round carries it. */
      spec: liveWalkSpec.optional(),
      /**
       * The garden finds a seed of the walk lost (its lease expired) and sends the round to the other
       * (docs/design.md section 5, "Ways out"). `source`: the destination observes the cluster and takes its
       * way out, answering which it took. `destination`: sent to the source; while the record holds the live
       * value the round only answers the way out (the owner record goes back first), and once the record
       * names the source it takes it (removes the destination's members, or forces the source's member).
       */
      lost: z.enum(['source', 'destination']).optional(),
      /**
       * With `lost: "destination"`: when the destination's latest walk round ends by its own timeout. A
       * destination whose members still answer the source may be cut off from the garden only, and walking
       * until then: the round waits for it before it answers the way out.
       */
      walkEndsBy: timestamp.optional(),
      /** This seed's backup bucket: its member's sidecar snapshots there. */
      backup: z.object({ bucket: z.string().min(3).max(63) }).strict(),
      secrets: shootSecrets.optional(),
      apiDomain: apiDomain.optional(),
    })
    .strict(),
  'LiveWalkCommand',
  "One round of a live migration (docs/design.md section 5, \"The live path\"), sent to the destination (to the source when the destination is lost, `lost`): it walks the shoot's etcd cluster from the source to its own members under raft (add a learner, start it, promote it, move the leadership, remove a source member) as far as it can without the garden, and answers the garden's step that comes next (the owner record's changes, the source's retirement). Once the owner record names it alone, it starts the control plane's components on its member. Idempotent: each round observes the cluster afresh.",
);

export const seedCommandSchema = named(
  z.discriminatedUnion('type', [
    createControlPlaneCommand,
    reconcileCommand,
    migrateCommand,
    deleteControlPlaneCommand,
    restoreCommand,
    scaleCommand,
    restartCommand,
    checkOwnerCommand,
    handOverCommand,
    liveWalkCommand,
  ]),
  'SeedCommand',
  'One message on a seed command queue.',
);
export type SeedCommand = z.infer<typeof seedCommandSchema>;
export type CommandType = SeedCommand['type'];
export type CommandOf<T extends CommandType> = Extract<SeedCommand, { type: T }>;
export const COMMAND_TYPES = [
  'create-control-plane',
  'reconcile',
  'migrate',
  'delete-control-plane',
  'restore',
  'scale',
  'restart',
  'check-owner',
  'hand-over',
  'live-walk',
] as const satisfies readonly CommandType[];

// ---- answers ----

const extensionOutcome = z
  .object({
    kind: z.enum(EXTENSION_KINDS),
    name: z.string().min(1).max(253),
    purpose: z.string().min(1).max(63).optional(),
    action: z.enum(['reconcile', 'migrate', 'restore', 'delete', 'skip']),
  })
  .strict();

const controlPlaneResult = () =>
  z
    .object({
      extensions: z.array(extensionOutcome).max(64),
      etcdReady: z.boolean(),
      /** The kube-apiserver's load balancer, once it exists: the garden points the shoot's API record at it. */
      externalUrl: z.string().url().max(2048).optional(),
    })
    .strict();

export const commandResultSchemas = {
  'create-control-plane': named(
    controlPlaneResult(),
    'CreateControlPlaneResult',
    'The control plane exists on the seed.',
  ),
  reconcile: named(controlPlaneResult(), 'ReconcileResult', 'The control plane matches the spec.'),
  migrate: named(
    z.object({ shootState: packedShootStateSchema, extensions: z.array(extensionOutcome).max(64) }).strict(),
    'MigrateResult',
    'Every extension migrated; the ShootState collected from them (blobs already in the state bucket), for the garden to persist.',
  ),
  'delete-control-plane': named(
    z.object({ deleted: z.boolean(), extensionsDropped: z.number().int().min(0) }).strict(),
    'DeleteControlPlaneResult',
    'deleted is false when there was nothing left to delete (a repeat).',
  ),
  restore: named(
    z
      .object({
        etcd: z
          .object({
            restoredRevision: z.number().int().min(0),
            snapshots: z.number().int().min(0),
            final: z.boolean(),
            /**
             * The answer to a restore ahead: true when etcd was restored ahead and waits unserved; false when this
             * runtime or shoot does not restore ahead (an HA cluster, the kubernetes runtime, a hibernated shoot),
             * and the normal restore does all of it.
             */
            ahead: z.boolean().optional(),
            /**
             * The answer to the normal restore: the revision the plane had been restored ahead to, when it caught up
             * from there; to a restore ahead of a plane already restored ahead (a refresh): the revision it had before.
             */
            aheadRevision: z.number().int().min(0).optional(),
            /**
             * The fidelity check (docs/design.md section 4, "Fidelity"): the restored key space's digest at its
             * revision, the digest the source's snapshot named there (absent, with the reason in `unchecked`,
             * where it named none), and `overridden` where they differ and the operator accepted it.
             */
            fidelity: z
              .object({
                revision: z.number().int().min(0),
                digest: z.string().regex(/^[0-9a-f]{64}$/),
                expected: z
                  .string()
                  .regex(/^[0-9a-f]{64}$/)
                  .optional(),
                against: z.string().max(1024).optional(),
                unchecked: z.string().max(1024).optional(),
                overridden: z.boolean().optional(),
              })
              .strict()
              .optional(),
          })
          .strict()
          .optional(),
        extensions: z.array(extensionOutcome).max(64).optional(),
      })
      .strict(),
    'RestoreResult',
    'What was restored: etcd up to restoredRevision from that many snapshots (ahead: restored ahead and not serving; aheadRevision: caught up, or refreshed, from a restore ahead at that revision), and each extension.',
  ),
  scale: named(
    z
      .object({
        component: z.enum(SCALE_DOWN_ORDER),
        previousReplicas: z.number().int().min(0),
        replicas: z.number().int().min(0),
      })
      .strict(),
    'ScaleResult',
    'The replicas before and after.',
  ),
  restart: named(
    z.object({ pod: z.string().min(1).max(253), restarted: z.boolean() }).strict(),
    'RestartResult',
    'restarted is false when the pod was not crash-looping any more.',
  ),
  'check-owner': named(
    z.object({ sidecars: z.number().int().min(0), notified: z.number().int().min(0) }).strict(),
    'CheckOwnerResult',
    'Logged by the agent, never sent (the command has no task token): how many sidecars the shoot has here and how many took the notice.',
  ),
  'hand-over': named(
    z.object({ handedOver: z.boolean() }).strict(),
    'HandOverResult',
    'Logged by the agent, never sent (the command has no task token): whether its load balancer hands the name over (false: the runtime has no load balancer of its own).',
  ),
  'live-walk': named(
    z
      .object({
        spec: liveWalkSpec,
        /**
         * The garden's step the walk waits for: the owner record to the live value or to this seed, the source's
         * retirement, none, (a way out after the source was lost, this seed's member wiped) the bad path, or
         * (the destination lost) the owner record back to the source.
         */
        next: z.enum(['own-both', 'own-destination', 'retire-source', 'done', 'bad-path', 'own-source']),
        /**
         * With `lost`: the way out taken. `continue`: this seed's voters hold the quorum, the walk went on without
         * the source; `force`: its member may be forced into a cluster of its own once the owner record names
         * this seed; `bad-path`: its member only learnt, so it was wiped, and the snapshots restore the shoot;
         * `abort-to-source`: the source's voters hold the quorum, and the lost destination's members are removed
         * once the record names the source again.
         */
        wayOut: z.enum(['continue', 'force', 'bad-path', 'abort-to-source']).optional(),
        /** The steps this round took, in order (`add-learner d0`, `remove s0`, ...). */
        taken: z.array(z.string().max(200)).max(64),
        /**
         * This seed's load balancer (`https://<host>:<port>`), where its kube-apiserver takes the shoot's
         * connections once it follows the walk: the garden hands the source's connections over to it before
         * the source's last member leaves. Absent where the runtime has no load balancer of its own.
         */
        loadBalancer: z.string().url().max(2048).optional(),
      })
      .strict(),
    'LiveWalkResult',
    'The walk as it stands after this round: what it is of, the steps taken, and the garden step it waits for.',
  ),
} as const satisfies Record<CommandType, z.ZodType>;

export type CommandResult<T extends CommandType> = z.infer<(typeof commandResultSchemas)[T]>;

const successBase = {
  apiVersion: z.literal(COMMAND_API_VERSION),
  commandId: commandIdSchema,
  seed: dns1123,
  completedAt: timestamp,
};
export const commandSuccessSchema = named(
  z.discriminatedUnion(
    'type',
    COMMAND_TYPES.map((type) =>
      z.object({ ...successBase, type: z.literal(type), result: commandResultSchemas[type] }).strict(),
    ) as unknown as [
      z.ZodObject<{ type: z.ZodLiteral<CommandType> }>,
      ...z.ZodObject<{ type: z.ZodLiteral<CommandType> }>[],
    ],
  ),
  'CommandSuccess',
  'The output of SendTaskSuccess (JSON, at most 256 KiB).',
);
export type CommandSuccess<T extends CommandType = CommandType> = {
  apiVersion: typeof COMMAND_API_VERSION;
  commandId: string;
  seed: string;
  completedAt: string;
  type: T;
  result: CommandResult<T>;
};

/**
 * The `error` of SendTaskFailure: a small fixed set, so that the state machines' Catch and Retry can
 * match on it. `retryable` ones are worth a Step Functions retry with backoff; the others are not.
 */
export const COMMAND_FAILURES = {
  InvalidCommand: {
    retryable: false,
    meaning: 'the message does not parse, has another apiVersion, or is addressed to another seed',
  },
  ControlPlaneNotFound: { retryable: false, meaning: 'the shoot has no control plane on this seed to act on' },
  ExtensionOperationFailed: {
    retryable: true,
    meaning: 'an extension actuator failed; details name kind, name and operation; the annotation stays for the retry',
  },
  EtcdRestoreFailed: {
    retryable: false,
    meaning:
      'the copied snapshots do not restore (gap, missing full snapshot, revision short of the expected one), or the restored key space differs from the digest the source named (details: revision, expected, actual, snapshot)',
  },
  SnapshotsUnavailable: { retryable: true, meaning: 'the backup bucket could not be read or written' },
  ShootStateUnavailable: {
    retryable: true,
    meaning: 'the state bucket could not be read or written, or a blob failed its sha256 check',
  },
  NotOwner: {
    retryable: true,
    meaning: 'the owner record does not name this seed (yet): the agent refuses to activate the control plane',
  },
  StillOwner: {
    retryable: false,
    meaning:
      'a delete-control-plane with ifNotOwner: this seed owns the shoot or cannot tell, so it keeps the control plane',
  },
  RuntimeUnavailable: {
    retryable: true,
    meaning: 'the seed runtime failed transiently (process start, Kubernetes API)',
  },
  LiveWalkUnsupported: {
    retryable: false,
    meaning:
      "this seed's runtime cannot take part in a live walk (a cluster of several members on either side, a runtime without a member of its own to join): the migration takes the snapshot path",
  },
  LiveWalkConflict: {
    retryable: false,
    meaning:
      'the etcd cluster or the owner record is in a state no walk of this spec leads to (another cluster, another owner); details: what was observed',
  },
  LiveWalkPeerLost: {
    retryable: false,
    meaning:
      "the other seed's members of the walking etcd cluster stopped answering while the walk needed them: the garden checks whether that seed is lost and takes the walk's way out",
  },
  Superseded: {
    retryable: false,
    meaning: 'a later command for the same shoot has been executed already; this one is stale',
  },
} as const;
export type CommandFailureName = keyof typeof COMMAND_FAILURES;
export const COMMAND_FAILURE_NAMES = Object.keys(COMMAND_FAILURES) as CommandFailureName[];

export const commandFailureCauseSchema = named(
  z
    .object({
      apiVersion: z.literal(COMMAND_API_VERSION),
      commandId: commandIdSchema.optional(),
      type: z.enum(COMMAND_TYPES).optional(),
      seed: dns1123,
      error: z.enum(COMMAND_FAILURE_NAMES as [CommandFailureName, ...CommandFailureName[]]),
      message: z.string().max(4096),
      retryable: z.boolean(),
      details: z.record(z.string(), z.unknown()).optional(),
    })
    .strict(),
  'CommandFailureCause',
  'The cause of SendTaskFailure: this document as JSON (at most 32,768 characters). Its error repeats SendTaskFailure.error.',
);
export type CommandFailureCause = z.infer<typeof commandFailureCauseSchema>;

export const commandProgressSchema = named(
  z
    .object({
      apiVersion: z.literal(COMMAND_API_VERSION),
      commandId: commandIdSchema,
      type: z.enum(COMMAND_TYPES),
      seed: dns1123,
      at: timestamp,
      progress: z.number().int().min(0).max(100).optional(),
      message: z.string().max(1024).optional(),
    })
    .strict(),
  'CommandProgress',
  'What the agent logs (and reports in its seed heartbeat) each time it calls SendTaskHeartbeat, which itself carries only the task token.',
);
export type CommandProgress = z.infer<typeof commandProgressSchema>;
