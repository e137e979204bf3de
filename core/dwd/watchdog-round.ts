import pLimit from 'p-limit';
import { apiDomainName, apiDomainUrl } from '../dns/api-domain.js';
import { ConflictError } from '../errors.js';
import type { EventSink } from '../garden/context.js';
import { leaseExpired } from '../garden/seed-lease.js';
import type { HostedControlPlane, Seed } from '../model/seed.js';
import type { Shoot } from '../model/shoot.js';
import { ETCD, KUBE_APISERVER, SCALE_DOWN_ORDER, WEEDER_DEPENDENCIES, type WeederDependency } from './components.js';
import type { ExternalProbeResult, ProbeRound } from './probe-round.js';
import { decideProbe, type ProbeVerdict } from './prober.js';
import type { ProberOptions } from './prober-options.js';
import type { WatchdogEvent } from './events.js';
import { defaultWeederTarget } from './weeder-targets.js';
import { decideWeeder } from './weeder.js';
import type { DependencyAvailability } from './weeder-state.js';
import {
  initialWatchdogRecord,
  type WatchdogCommand,
  type WatchdogRecord,
  type WatchdogStateStore,
} from './watchdog-store.js';

/** The external probe's URL: the API domain on the load balancer's scheme and port, or the load balancer itself. */
export function probeUrl(shoot: Shoot, externalUrl: string, apiDomain: { externalDomain: string } | undefined): string {
  if (!apiDomain) return externalUrl;
  return apiDomainUrl(
    apiDomainName({
      shoot: shoot.metadata.name,
      project: shoot.metadata.project,
      externalDomain: apiDomain.externalDomain,
    }),
    externalUrl,
  );
}

function serverNameOf(shoot: Shoot, options: WatchdogRoundOptions): { serverName?: string } {
  const externalDomain = options.externalDomain ?? options.apiDomain?.externalDomain;
  if (!externalDomain) return {};
  return {
    serverName: apiDomainName({ shoot: shoot.metadata.name, project: shoot.metadata.project, externalDomain }),
  };
}

/** Probes a kube-apiserver from outside the seed, through its load balancer. */
export interface ExternalProber {
  /**
   * `serverName`: the name to ask for in TLS (SNI) when the URL is the load balancer's address: a seed's
   * load balancer routes its shoots' kube-apiservers by that name.
   */
  probe(url: string, options?: { serverName?: string }): Promise<ExternalProbeResult>;
}

/** Delivers watchdog commands to a seed's agent. */
export interface WatchdogCommandSender {
  send(options: { seedName: string; shoot: Shoot; commandId: string; actions: WatchdogCommand[] }): Promise<void>;
}

export interface WatchdogRoundOptions {
  shoots: readonly Shoot[];
  seeds: readonly Seed[];
  store: WatchdogStateStore;
  prober: ExternalProber;
  commands: WatchdogCommandSender;
  events: EventSink;
  now: Date;
  /** How many shoots are probed at once. */
  concurrency?: number;
  prober_options?: Partial<ProberOptions>;
  newId?: () => string;
  /**
   * Probe through the shoot's API domain, as kubelets and users reach it, instead of the load balancer the
   * heartbeat reports: then a wrong or stale API record shows as an external failure too. Needs DNS that
   * serves the external domain's zone where the prober runs.
   */
  apiDomain?: { externalDomain: string };
  /** The deployment's external domain: the shoot's API domain is the name asked for at the load balancer. */
  externalDomain?: string;
}

export interface ShootRoundResult {
  shoot: string;
  /** `seed-lease-expired`: the seed's agent is not heard from; nothing is probed, decided or sent (see below). */
  verdict: ProbeVerdict | 'no-control-plane' | 'conflict' | 'seed-lease-expired';
  external?: ExternalProbeResult;
  commands: number;
  /** Why a shoot was skipped, in words, for the round's log. */
  reason?: string;
}

/**
 * One watchdog round over the fleet: for every shoot with a control plane, probe its API server from
 * outside, read the agent's internal view from its seed's heartbeat, decide (prober and weeder), store
 * the decision with a conditional write, then send the commands. Storing first means two overlapping
 * rounds cannot both act; keeping the commands as pending until sent means a crash in between cannot
 * lose them.
 */
export async function runWatchdogRound(options: WatchdogRoundOptions): Promise<ShootRoundResult[]> {
  const seeds = new Map(options.seeds.map((s) => [s.metadata.name, s]));
  const limit = pLimit(options.concurrency ?? 50);
  const newId = options.newId ?? (() => crypto.randomUUID());
  // Every shoot's state in a few batched reads rather than one read per shoot; a state saved after this by
  // an overlapping round makes this round's conditional save fail, as a late single read would.
  const preloaded = await options.store.loadMany?.(options.shoots.map(shootKeyOf));
  const load = (id: string) => (preloaded ? Promise.resolve(preloaded.get(id)) : options.store.load(id));
  return Promise.all(
    options.shoots.map((shoot) =>
      limit(async (): Promise<ShootRoundResult> => {
        const id = shootKeyOf(shoot);
        const seedName = shoot.status.seedName;
        const seed = seedName ? seeds.get(seedName) : undefined;
        const cp = seed?.status.controlPlanes?.find((c) => c.technicalID === shoot.status.technicalID);
        if (!seedName || !seed || !cp?.externalUrl) return { shoot: id, verdict: 'no-control-plane', commands: 0 };
        if (leaseExpired(seed, options.now))
          return skipSilentSeed({ id, seed, store: options.store, stored: await load(id), now: options.now });

        // A hibernated or migrating shoot is not probed; the decision skips it before reading the result.
        const external = isSkipped(shoot)
          ? 'success'
          : await options.prober.probe(
              probeUrl(shoot, cp.externalUrl, options.apiDomain),
              serverNameOf(shoot, options),
            );
        const stored = await load(id);
        const previous = stored?.record ?? initialWatchdogRecord();
        const decided = decide({
          previous,
          shoot,
          seed,
          cp,
          external,
          now: options.now,
          options: options.prober_options ?? {},
        });
        const fresh =
          decided.actions.length > 0
            ? [{ commandId: newId(), seedName, actions: decided.actions, events: decided.events }]
            : [];
        const record: WatchdogRecord = { ...decided.record, pending: [...previous.pending, ...fresh] };
        let version = stored?.version;
        if (!stored || JSON.stringify(record) !== JSON.stringify(previous)) {
          try {
            version = await options.store.save(id, record, stored?.version);
          } catch (error) {
            // Another round decided for this shoot in the meantime; its decision stands.
            if (error instanceof ConflictError) return { shoot: id, verdict: 'conflict', external, commands: 0 };
            throw error;
          }
        }
        let sent = 0;
        for (const batch of record.pending) {
          await options.commands.send({
            seedName: batch.seedName,
            shoot,
            commandId: batch.commandId,
            actions: batch.actions,
          });
          sent += batch.actions.length;
          for (const event of batch.events)
            await options.events.publish(event.reason, eventDetail(shoot, batch.seedName, event));
        }
        if (record.pending.length > 0) {
          try {
            await options.store.save(id, { ...record, pending: [] }, version);
          } catch (error) {
            // A newer round saw the pending commands and sends them again; they are idempotent by id.
            if (!(error instanceof ConflictError)) throw error;
          }
        }
        return { shoot: id, verdict: decided.verdict, external, commands: sent };
      }),
    ),
  );
}

/**
 * A seed whose lease has expired cannot be reached from the garden (its agent is frozen, partitioned or
 * gone): its internal view is unknown, and a command queued now would run whenever the agent comes back,
 * on the evidence of an outage that may be long over. So it is never scaled (down or up) nor restarted
 * because of it: nothing is probed or sent, and the outage's streak restarts (a hold survives, as when
 * hibernated), so a scale-down after the agent returns needs a whole new streak.
 */
async function skipSilentSeed(input: {
  id: string;
  seed: Seed;
  store: WatchdogStateStore;
  stored: Awaited<ReturnType<WatchdogStateStore['load']>>;
  now: Date;
}): Promise<ShootRoundResult> {
  const { id, seed, store, stored, now } = input;
  const reason = `seed ${seed.metadata.name}'s lease expired (last renewed ${seed.status.lastHeartbeatTime ?? 'never'}): its agent is not heard from, so nothing is scaled on its account`;
  if (stored) {
    const { externalDownSinceMs: _since, ...probe } = stored.record.probe;
    const reset = {
      ...stored.record,
      probe: { ...probe, consecutiveExternalFailures: 0, consecutiveExternalSuccesses: 0 },
    };
    if (JSON.stringify(reset) !== JSON.stringify(stored.record)) {
      try {
        await store.save(id, reset, stored.version);
      } catch (error) {
        // A concurrent round stored first; the next round resets again.
        if (!(error instanceof ConflictError)) throw error;
      }
    }
  }
  return { shoot: id, verdict: 'seed-lease-expired', commands: 0, reason: `${reason} (at ${now.toISOString()})` };
}

/** The key of a shoot's watchdog state: `<project>/<name>`. */
export function shootKeyOf(shoot: Pick<Shoot, 'metadata'>): string {
  return `${shoot.metadata.project}/${shoot.metadata.name}`;
}

function isSkipped(shoot: Shoot): boolean {
  return shoot.spec.hibernation?.enabled === true || isMigrating(shoot);
}

/** A shoot whose control plane is moving between seeds: the watchdog keeps its hands off. */
export function isMigrating(shoot: Shoot): boolean {
  const op = shoot.status.lastOperation;
  return (op?.type === 'Migrate' || op?.type === 'Restore') && (op.state === 'Processing' || op.state === 'Error');
}

function decide(input: {
  previous: WatchdogRecord;
  shoot: Shoot;
  seed: Seed;
  cp: HostedControlPlane;
  external: ExternalProbeResult;
  now: Date;
  options: Partial<ProberOptions>;
}): {
  record: Omit<WatchdogRecord, 'pending'>;
  actions: WatchdogCommand[];
  events: WatchdogEvent[];
  verdict: ProbeVerdict;
} {
  const { cp, now } = input;
  const reportedAt = internalReportedAt(cp, input.seed);
  const round: ProbeRound = {
    atMs: now.getTime(),
    external: input.external,
    ...(cp.internalProbe
      ? {
          internal: {
            result: cp.internalProbe === 'Success' ? 'success' : cp.internalProbe === 'Failure' ? 'failure' : 'unknown',
            ageSeconds: (now.getTime() - reportedAt) / 1000,
          },
        }
      : {}),
    hibernated: input.shoot.spec.hibernation?.enabled === true,
    migrating: isMigrating(input.shoot),
    replicas: Object.fromEntries(
      SCALE_DOWN_ORDER.flatMap((c) => (cp.components?.[c] ? [[c, cp.components[c].replicas]] : [])),
    ),
  };
  const probe = decideProbe({ state: input.previous.probe, round, options: input.options });
  const actions: WatchdogCommand[] = [...probe.actions];
  const events = [...probe.events];
  const weeder = { ...input.previous.weeder };
  if (!round.hibernated && !round.migrating) {
    for (const dependency of WEEDER_DEPENDENCIES) {
      const w = decideWeeder({
        state: input.previous.weeder[dependency],
        observation: { availability: availability(cp, dependency), pods: cp.pods ?? [], nowMs: now.getTime() },
        target: defaultWeederTarget(dependency),
      });
      weeder[dependency] = w.state;
      actions.push(...w.actions);
      events.push(...w.events);
    }
  }
  return { record: { probe: probe.state, weeder }, actions, events, verdict: probe.verdict };
}

/**
 * When the agent took its internal result, as far as the garden can vouch: the probe time it reported, but
 * never later than the heartbeat (lease renewal, garden clock) that carried it, so an agent clock ahead of
 * the garden's cannot make an old result look fresh.
 */
function internalReportedAt(cp: HostedControlPlane, seed: Seed): number {
  const renewed = Date.parse(seed.status.lastHeartbeatTime ?? '');
  const probed = Date.parse(cp.internalProbeTime ?? '');
  if (Number.isNaN(probed)) return renewed;
  return Number.isNaN(renewed) ? probed : Math.min(probed, renewed);
}

function availability(cp: HostedControlPlane, dependency: WeederDependency): DependencyAvailability {
  if (dependency === ETCD) return cp.etcdReady === undefined ? 'unknown' : cp.etcdReady ? 'available' : 'unavailable';
  if (dependency === KUBE_APISERVER) {
    return cp.internalProbe === 'Success' ? 'available' : cp.internalProbe === 'Failure' ? 'unavailable' : 'unknown';
  }
  return 'unknown';
}

function eventDetail(shoot: Shoot, seedName: string, event: WatchdogEvent): Record<string, unknown> {
  return {
    project: shoot.metadata.project,
    shoot: shoot.metadata.name,
    seedName,
    type: event.type,
    message: event.message,
    subjects: event.subjects,
  };
}
