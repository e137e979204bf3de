import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LiveWalkSpec } from '../../core/migration/live-walk.js';
import type { OwnerValue } from '../../core/ownership/owner-value.js';
import type { LiveWalkHost, WalkMemberPlan } from '../../seed/backup-restore/cluster/live-walk.js';
import { clusterIdHex, memberList, memberStatus } from '../../seed/backup-restore/etcd-gateway.js';
import { EtcdProcess, type EtcdLaunch, type EtcdPeerTls } from '../../seed/backup-restore/etcd-process.js';
import { freePorts } from '../../seed/ports.js';
import { newEtcdPeerCA } from '../../core/pki/shoot-secrets.js';
import { writeEtcdPeerFiles } from '../../seed/agent/secret-files.js';

/**
 * Two seeds' worth of etcd members on loopback for the live walk (docs/design.md section 5, "The live
 * path"): the source's members running as one cluster, the destination's planned, and a host that starts
 * them as etcd processes, keeps the owner record in memory (written conditionally, as Route 53's is), and
 * retires the source by stopping its processes. Used by test/integration/live-walk.test.ts and
 * `npm run bench:live-walk`.
 */

export interface LiveWalkLandscape {
  readonly plan: readonly WalkMemberPlan[];
  readonly spec: LiveWalkSpec;
  readonly host: LiveWalkHost & { owner: OwnerValue | undefined };
  /** The process of each member, by name, as last started. */
  readonly running: Map<string, EtcdProcess>;
  /** Where each member's data dir and log (`<name>.log`) are. */
  readonly dir: string;
  stop(): Promise<void>;
}

/** etcd's short timings keep an election quick on loopback; a transfer does not wait for one. */
const TIMINGS = { heartbeatInterval: 50, electionTimeout: 500 };

/** How a test starts one member of a cluster of real etcd processes in `dir`, with raft's timings shortened. */
export function testMemberLaunch(
  dir: string,
  m: { name: string; clientUrl: string; peerUrl: string },
  options: { cluster?: EtcdLaunch['cluster']; peerTls?: EtcdPeerTls | undefined; extraArgs?: string[] } = {},
): EtcdLaunch {
  return {
    binary: 'etcd',
    name: m.name,
    dataDir: join(dir, m.name),
    clientUrl: m.clientUrl,
    peerUrl: m.peerUrl,
    ...TIMINGS,
    extraArgs: options.extraArgs ?? [],
    ...(options.cluster ? { cluster: options.cluster } : {}),
    ...(options.peerTls ? { peerTls: options.peerTls } : {}),
    logFile: join(dir, `${m.name}.log`),
  };
}

export async function startLiveWalkLandscape(options: {
  readonly dir: string;
  readonly token: string;
  readonly sources: number;
  readonly destinations: number;
  readonly identities: { readonly source: string; readonly destination: string };
  /** Peer traffic as on a seed whose shoot has an etcd peer CA (default), or plain as before it. */
  readonly peers?: 'tls' | 'plain';
}): Promise<LiveWalkLandscape> {
  const { dir, token, sources, destinations } = options;
  const peerCA = options.peers === 'plain' ? undefined : await newEtcdPeerCA(new Date());
  const scheme = peerCA ? 'https' : 'http';
  const ports = await freePorts(2 * (sources + destinations));
  const plan: WalkMemberPlan[] = [
    ...Array.from({ length: sources }, (_, i) => ({ name: `s${i}`, side: 'source' as const })),
    ...Array.from({ length: destinations }, (_, i) => ({ name: `d${i}`, side: 'destination' as const })),
  ].map((m, i) => ({
    ...m,
    clientUrl: `http://127.0.0.1:${ports[2 * i]}`,
    peerUrl: `${scheme}://127.0.0.1:${ports[2 * i + 1]}`,
  }));
  // Each member's certificate from the one peer CA, as each seed issues its own from the shoot's secrets.
  const peerTls = new Map(
    await Promise.all(
      plan.map(async (m) => {
        const files = await writeEtcdPeerFiles({
          dir: join(dir, 'pki', m.name),
          secrets: peerCA && { etcdPeerCA: peerCA },
          member: m.name,
          peerUrls: [m.peerUrl],
        });
        return [m.name, files] as const;
      }),
    ),
  );
  const running = new Map<string, EtcdProcess>();
  const all: EtcdProcess[] = [];
  const launch = (m: WalkMemberPlan, cluster: EtcdLaunch['cluster'], extraArgs: string[] = []): EtcdLaunch =>
    testMemberLaunch(dir, m, { cluster, peerTls: peerTls.get(m.name), extraArgs });
  const run = async (m: WalkMemberPlan, l: EtcdLaunch) => {
    const etcd = await EtcdProcess.start(l, { timeoutMs: 15_000, readiness: 'listening' });
    all.push(etcd);
    running.set(m.name, etcd);
  };
  const stop = async () => {
    await Promise.all(all.map((p) => p.stop({ timeoutMs: 5_000 })));
  };
  const sourcePlan = plan.filter((m) => m.side === 'source');
  const initialCluster = sourcePlan.map((m) => ({ name: m.name, peerUrl: m.peerUrl }));
  try {
    await Promise.all(sourcePlan.map((m) => run(m, launch(m, { state: 'new', token, initialCluster }))));
    await electsWithin(sourcePlan[0]!.clientUrl, 20_000);
  } catch (error) {
    await stop();
    throw error;
  }
  const { clusterId } = await memberList(sourcePlan[0]!.clientUrl);
  const spec: LiveWalkSpec = {
    source: { identity: options.identities.source, members: sourcePlan.map((m) => m.name) },
    destination: {
      identity: options.identities.destination,
      members: plan.filter((m) => m.side === 'destination').map((m) => m.name),
    },
    cluster: clusterIdHex(clusterId),
  };
  let retired = false;
  const host: LiveWalkLandscape['host'] = {
    owner: { kind: 'seed', seed: options.identities.source },
    async start(m, members) {
      // Chosen again until etcd lists the member's name (once it published it): one process per member.
      if (running.get(m.name)?.running) return;
      await run(m, launch(m, { state: 'existing', token, initialCluster: members }));
    },
    async readOwner() {
      return host.owner;
    },
    async writeOwner(from, to) {
      if (JSON.stringify(from) !== JSON.stringify(host.owner))
        throw new Error(`owner record holds ${JSON.stringify(host.owner)}, not ${JSON.stringify(from)}`);
      host.owner = to;
    },
    async sourceRetired() {
      return retired;
    },
    async retireSource() {
      for (const m of sourcePlan) await running.get(m.name)?.stop({ timeoutMs: 5_000 });
      retired = true;
    },
    async force(m) {
      await running.get(m.name)?.stop({ timeoutMs: 5_000 });
      await run(m, launch(m, undefined, ['--force-new-cluster']));
    },
  };
  return { plan, spec, host, running, dir, stop };
}

async function electsWithin(clientUrl: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const leader = (await memberStatus(clientUrl, 500).catch(() => undefined))?.leader;
    if (leader !== undefined && leader !== '0') return;
    await sleep(50);
  }
  throw new Error(`the source cluster elected no leader within ${timeoutMs} ms`);
}
