import { z } from 'zod';
import { cidr } from './cidr.js';
import { dns1123Label, labelKey, labelKeyNames, labelValue } from './names.js';
import { evacuationSettings } from '../evacuation/settings.js';
import {
  condition,
  dateTime,
  metadataInput,
  providerType,
  region,
  taint,
  zone,
  type Condition,
  type ObjectMeta,
} from './common.js';

const uniqueZones = z
  .array(zone)
  .min(1)
  .max(16)
  .refine((zs) => new Set(zs).size === zs.length, 'zones must be unique')
  .meta({ uniqueItems: true });

export const workerPool = z
  .object({
    name: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS-1123 label'),
    zones: uniqueZones,
    minimum: z.number().int().min(0).max(10_000),
    maximum: z.number().int().min(0).max(10_000).optional(),
    taints: z.array(taint).max(32).optional(),
  })
  .strict()
  .refine((p) => p.maximum === undefined || p.maximum >= p.minimum, {
    message: 'maximum must not be below minimum',
    path: ['maximum'],
  });

export const seedSpec = z
  .object({
    provider: z.object({ type: providerType, region, zones: uniqueZones }).strict(),
    backup: z
      .object({
        bucket: z
          .string()
          .min(3)
          .max(63)
          .regex(/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/, 'must be an S3 bucket name'),
        region,
      })
      .strict()
      .optional(),
    networks: z.object({ nodes: cidr.optional(), pods: cidr, services: cidr }).strict(),
    taints: z.array(taint).max(32).optional(),
    settings: z
      .object({
        scheduling: z.object({ visible: z.boolean() }).strict().optional(),
        evacuation: evacuationSettings.optional(),
      })
      .strict()
      .optional(),
    capacity: z
      .object({ shoots: z.number().int().min(0).max(100_000) })
      .strict()
      .optional(),
    workerPools: z.array(workerPool).max(32).optional(),
  })
  .strict();
export type SeedSpec = z.infer<typeof seedSpec>;

/** What `PUT /seeds/{name}` accepts. `status` is owned by the server and ignored, as in Kubernetes. */
export const seedInput = z
  .object({
    apiVersion: z.literal('core.gardenless.io/v1').optional(),
    kind: z.literal('Seed').optional(),
    metadata: metadataInput.optional(),
    spec: seedSpec,
    status: z.unknown().optional(),
  })
  .strict();
export type SeedInput = z.infer<typeof seedInput>;

/**
 * What a shoot's sidecars run with (ms), as the agent reports it in its heartbeat (of a cluster, each field's
 * largest value among its members): the garden bounds the copy's wait for the final snapshot of a migration
 * from this seed by it (docs/design.md section 4, "Copy").
 */
export const sidecarSettings = z
  .object({
    ownerCheckInterval: z.number().int().min(1).max(86_400_000),
    checkTimeout: z.number().int().min(0).max(86_400_000),
    unknownGrace: z.number().int().min(0).max(86_400_000),
    /** How old an owner answer it may act on: its own cache plus what resolvers on the way may hold (0: it reads the records' API). */
    dnsCacheTTL: z.number().int().min(0).max(86_400_000),
    deltaSnapshotInterval: z.number().int().min(1).max(86_400_000),
    backupLagLimit: z.number().int().min(1).max(86_400_000),
  })
  .strict();
export type SidecarSettings = z.infer<typeof sidecarSettings>;

/** A control plane as the seed agent reports it in its heartbeat. */
export const hostedControlPlane = z
  .object({
    technicalID: z.string().min(1).max(63),
    /** The shoot it belongs to, as the commands named it: the garden decides from it whether a leftover may go. */
    shoot: z.object({ project: dns1123Label, name: dns1123Label }).strict().optional(),
    /** Whether this seed currently serves the control plane (etcd unfenced and ready). */
    active: z.boolean(),
    /** The owner check result the sidecar last saw. */
    ownerCheck: z.enum(['owner', 'not-owner', 'unknown']).optional(),
    /** The kube-apiserver probed from inside the seed (dependency-watchdog's internal probe). */
    internalProbe: z.enum(['Success', 'Failure', 'Unknown']).optional(),
    /** When the internal probe ran; the garden ignores stale results. */
    internalProbeTime: dateTime.optional(),
    /** The kube-apiserver's external (load-balancer) URL, which the garden's prober probes from outside. */
    externalUrl: z.string().url().max(2048).optional(),
    etcdReady: z.boolean().optional(),
    /** What its sidecars run with; absent from agents that do not report it (the copy then waits its fixed time). */
    sidecarSettings: sidecarSettings.optional(),
    /** How long the sidecar took from losing ownership to refusing writes, when it last fenced (ms). */
    fenceMs: z.number().int().min(0).max(86_400_000).optional(),
    /** Where the shoot's kube-apiserver reaches etcd in the seed (the etcd client service), while it serves. */
    etcdClientUrl: z.string().url().max(2048).optional(),
    /** The members of a `node` or `zone` shoot's etcd cluster: zone, raft role, and whether each serves. */
    etcdMembers: z
      .array(
        z
          .object({
            name: z.string().min(1).max(63),
            zone: z.string().max(63).optional(),
            role: z.enum(['leader', 'follower', 'learner', 'unknown']),
            ready: z.boolean(),
            healthy: z.boolean(),
            fenced: z.boolean(),
          })
          .strict(),
      )
      .max(9)
      .optional(),
    /** The member that leads the cluster, as the members see it. */
    etcdLeader: z.string().max(63).optional(),
    /** Control-plane pods with labels and states, for the weeder. */
    pods: z
      .array(
        z
          .object({
            name: z.string().min(1).max(253),
            uid: z.string().min(1).max(64).optional(),
            labels: z.record(labelKey, labelValue).meta(labelKeyNames),
            state: z.string().min(1).max(64),
            deleting: z.boolean().optional(),
          })
          .strict(),
      )
      .max(200)
      .optional(),
    components: z
      .record(dns1123Label, z.object({ replicas: z.number().int().min(0).max(100) }).strict())
      .meta({
        propertyNames: { type: 'string', minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' },
      })
      .optional(),
  })
  .strict();
export type HostedControlPlane = z.infer<typeof hostedControlPlane>;

/**
 * A heartbeat's body may be this large where other requests' may be 256 KiB: it lists every plane the seed
 * hosts (about 2.3 KB each for a single-member shoot). DynamoDB's 4 MB a transaction, which writes the
 * report with its lease, is what bounds it (adapters/dynamodb/seed-lease-items.ts).
 */
/**
 * What a seed's runtime can do beyond the commands every runtime answers: `live-walk`, its hosting runs a
 * member of its own that joins a shoot's running etcd (docs/design.md section 5, "The live path"). The garden's
 * `mode=auto` walks a shoot live only between two seeds that both report it.
 */
export const SEED_CAPABILITIES = ['live-walk'] as const;
export const seedCapability = z.enum(SEED_CAPABILITIES);
export type SeedCapability = z.infer<typeof seedCapability>;

export const HEARTBEAT_MAX_BODY_BYTES = 3 * 1024 * 1024;
export const heartbeatInput = z
  .object({
    identity: z.string().min(1).max(128).optional(),
    conditions: z.array(condition).max(32),
    controlPlanes: z.array(hostedControlPlane).max(5_000).optional(),
    capabilities: z.array(seedCapability).max(16).optional(),
    agentVersion: z.string().max(64).optional(),
    /** How long this heartbeat holds (the agent's interval times three); default the garden's. */
    leaseDurationSeconds: z.number().int().min(1).max(3_600).optional(),
  })
  .strict();
export type HeartbeatInput = z.infer<typeof heartbeatInput>;

export interface SeedStatus {
  /** Stable identity of this registration: written into owner records. */
  identity: string;
  conditions: Condition[];
  allocatable?: { shoots: number };
  /** Shoots whose `status.seedName` is this seed, counted atomically with their placement. */
  shoots: number;
  /** From the seed's lease: when its agent last heartbeated, and how long that holds. */
  lastHeartbeatTime?: string;
  leaseDurationSeconds?: number;
  labels: Record<string, string>;
  controlPlanes?: HostedControlPlane[];
  /** From the seed's lease: what its runtime reported it can do (none: an agent that reports nothing). */
  capabilities?: SeedCapability[];
  /** Where the garden sends this seed's commands; the agent learns it from its heartbeat answer. */
  commandQueueUrl?: string;
}

export interface Seed {
  apiVersion: 'core.gardenless.io/v1';
  kind: 'Seed';
  metadata: ObjectMeta;
  spec: SeedSpec;
  status: SeedStatus;
}
