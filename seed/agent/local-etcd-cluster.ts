import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { EtcdMemberPlacement } from '../../core/ha/members.js';
import type { ShootSecrets } from '../../core/shootstate/secrets.js';
import { planRestore, type SnapshotStore } from '../../core/snapshots/index.js';
import type { ClusterMemberSpec } from '../backup-restore/cluster/spec.js';
import type { RangedObjectReader } from '../backup-restore/ranged-download.js';
import { download } from '../backup-restore/restorer.js';
import type { SidecarStatus } from '../backup-restore/sidecar.js';
import { plannedPorts } from '../ports.js';
import { LocalProcessError, messageOf, RestoreRefusedError } from './errors.js';
import type { EtcdMemberView, EtcdSpec, EtcdStarted, EtcdView } from './hosting.js';
import { etcdPeerScheme, pkiDir, writeEtcdPeerFiles } from './secret-files.js';
import { sidecarArgs, type SidecarDefaults } from './sidecar-args.js';
import { reportedSettings } from './sidecar-settings.js';
import type { SidecarProcess } from './sidecar-process.js';

export interface LocalEtcdClusterOptions {
  technicalID: string;
  /** `<workDir>/<technicalID>`: every member's data dir and log below it. */
  dir: string;
  members: readonly EtcdMemberPlacement[];
  defaults: SidecarDefaults;
  /** Starts one sidecar process (the hosting's way: the gardenless CLI in its own process group). */
  launch: (input: {
    member: string;
    args: string[];
    logFile: string;
    startTimeoutMs?: number;
  }) => Promise<SidecarProcess>;
  /** The seed's backup bucket, for the one download a restore of all members shares. Absent: each member downloads. */
  backups?: (bucket: string) => { store: SnapshotStore; rangedReader?: RangedObjectReader };
  /**
   * Ports the hosting planned for its planes (this one's kube-apiserver among them) that may not be bound
   * yet: the members' ports are none of them.
   */
  plannedElsewhere?: () => ReadonlySet<number>;
  /**
   * The shoot's secrets as delivered here: a cluster planned while they hold the etcd peer CA speaks TLS
   * between its members. Absent: plain peers.
   */
  secrets?: () => ShootSecrets | undefined;
  /** Before a member whose sidecar died is started again (a kubelet's restart). Default 1 s, doubling to 10 s. */
  restartDelayMs?: number;
  log?: (entry: Record<string, unknown>) => void;
}

interface Member {
  placement: EtcdMemberPlacement;
  spec: ClusterMemberSpec;
  sidecar?: SidecarProcess;
  /** It should run: an exit is a crash to restart. */
  wanted: boolean;
  restartTimer?: NodeJS.Timeout;
  restartDelay: number;
  restarts: number;
}

/** A member as tests and views see it. */
export interface LocalMember {
  name: string;
  zone?: string;
  sidecar: SidecarProcess | undefined;
  dataDir: string;
  restarts: number;
}

/** A restoring sidecar reports once the restore is done: a large etcd's download and restore take minutes on a loaded machine. */
export const RESTORE_START_TIMEOUT_MS = 10 * 60_000;

/**
 * The etcd cluster of one `node` or `zone` shoot on the local runtime: one backup-restore sidecar
 * process per member (each with its real etcd, data dir and ports), started together, restored together
 * from one download of the full snapshot, and restarted when one dies, as a kubelet restarts a pod. The
 * ports stay the same for the plane's life on this machine (recorded in its directory, so that a restarted
 * agent keeps them too), so a restart or a restore keeps every address.
 */
export class LocalEtcdCluster {
  private members: Member[] | undefined;

  constructor(private readonly options: LocalEtcdClusterOptions) {}

  /** Starts every member that does not run, or (with `spec.restore`) restores all of them. */
  async ensure(spec: EtcdSpec): Promise<EtcdStarted> {
    const members = await this.allocate();
    if (spec.restore) return this.restore(spec, members);
    const running = members.filter((m) => m.sidecar?.running);
    if (running.length === members.length) return {};
    // A cluster that ran here before (some member has data) is joined; otherwise it is bootstrapped by all together.
    const state = members.some((m) => existsSync(join(this.dataDir(m), 'member', 'wal'))) ? 'existing' : 'new';
    const token = state === 'new' ? this.newToken() : this.token();
    await Promise.all(
      members.filter((m) => !m.sidecar?.running).map((m) => this.startMember(m, spec, { state, token })),
    );
    return {};
  }

  async stop(): Promise<void> {
    await Promise.all(
      (this.members ?? []).map(async (m) => {
        m.wanted = false;
        clearTimeout(m.restartTimer);
        await m.sidecar?.stop();
        delete m.sidecar;
      }),
    );
  }

  /** One full snapshot by the etcd leader's sidecar (the one that snapshots), before a hibernation stops the cluster. */
  async fullSnapshot(): Promise<void> {
    const { leader } = await this.view();
    const sidecar = this.members?.find((m) => m.spec.name === leader)?.sidecar;
    if (sidecar?.running) await sidecar.fullSnapshot();
  }

  /**
   * Nothing is restarted any more, nothing is stopped: the seed's machines died with their kubelet (a test
   * kills the processes next). `stop` still stops what runs.
   */
  stopRestarting(): void {
    for (const m of this.members ?? []) {
      m.wanted = false;
      clearTimeout(m.restartTimer);
    }
  }

  /** Every member's public client URL (what kube-apiserver is given; a fenced member refuses). */
  clientUrls(): string[] {
    return (this.members ?? []).map((m) => m.spec.clientUrl);
  }

  /** Every port the members were given, bound or not (a fenced or restarting member leaves its own unbound). */
  memberPorts(): number[] {
    return (this.members ?? []).flatMap((m) => [m.spec.peerUrl, m.spec.clientUrl, m.spec.privateUrl].map(portOf));
  }

  sidecars(): SidecarProcess[] {
    return (this.members ?? []).flatMap((m) => (m.sidecar ? [m.sidecar] : []));
  }

  list(): LocalMember[] {
    return (this.members ?? []).map((m) => ({
      name: m.spec.name,
      ...(m.spec.zone ? { zone: m.spec.zone } : {}),
      sidecar: m.sidecar,
      dataDir: this.dataDir(m),
      restarts: m.restarts,
    }));
  }

  /** Every member as its sidecar reports it; the cluster serves while one member is ready and healthy. */
  async view(): Promise<EtcdView> {
    const members = this.members ?? [];
    const statuses = await Promise.all(
      members.map((m) => (m.sidecar?.running ? m.sidecar.status(1_000) : Promise.resolve(undefined))),
    );
    const views: EtcdMemberView[] = members.map((m, i) => memberView(m, statuses[i]));
    const serving = views.find((v) => v.ready && v.healthy);
    const checks = statuses.flatMap((s) => (s?.owner.lastResult ? [s.owner.lastResult] : []));
    const ownerCheck = checks.includes('not-owner')
      ? 'not-owner'
      : checks.length > 0 && checks.every((c) => c === 'owner')
        ? 'owner'
        : checks.length > 0
          ? 'unknown'
          : undefined;
    const leader = views.find((v) => v.role === 'leader')?.name;
    const settings = reportedSettings(statuses);
    const running = views.some((v) => v.running);
    return {
      running,
      available: serving !== undefined,
      ...(running && statuses.every((s) => s === undefined) ? { unanswered: true } : {}),
      ...(ownerCheck ? { ownerCheck: ownerCheck as 'owner' | 'not-owner' | 'unknown' } : {}),
      ...(serving ? { clientUrl: serving.clientUrl } : {}),
      members: views,
      ...(leader ? { leader } : {}),
      ...(settings ? { settings } : {}),
    };
  }

  private async restore(spec: EtcdSpec, members: Member[]): Promise<EtcdStarted> {
    await this.stop();
    const token = this.newToken();
    let file: string | undefined;
    if (this.options.backups) {
      // One download for every member: they share this machine (on a real seed each pod downloads its own).
      const { store, rangedReader } = this.options.backups(spec.bucket);
      const plan = planRestore(await store.list(this.options.technicalID), {
        technicalID: this.options.technicalID,
        ...(spec.restore?.expectedLastRevision === undefined
          ? {}
          : { expectedLastRevision: spec.restore.expectedLastRevision }),
      });
      file = join(this.options.dir, 'restore-full.db');
      await download(store, plan.full, file, rangedReader);
    }
    try {
      const started = await Promise.allSettled(
        members.map((m) => this.startMember(m, spec, { state: 'new', token, ...(file ? { restoreFile: file } : {}) })),
      );
      const failed = started.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      if (failed.length > 0) {
        // A cluster restored in part serves nothing: the members that did restore stop with the others.
        await this.stop();
        throw failed.find((e) => e instanceof RestoreRefusedError) ?? failed[0];
      }
      const statuses = await Promise.all(members.map((m) => m.sidecar!.status(5_000)));
      const revisions = statuses.map((s) => s?.restore?.revision);
      if (revisions.some((r) => r === undefined || r !== revisions[0])) {
        throw new LocalProcessError(
          `the members of ${this.options.technicalID} restored to different revisions: ${members.map((m, i) => `${m.spec.name} ${revisions[i] ?? '?'}`).join(', ')}`,
          this.options.technicalID,
        );
      }
      const fidelity = statuses[0]?.restore?.fidelity;
      return { restoredRevision: revisions[0]!, ...(fidelity ? { fidelity } : {}) };
    } finally {
      if (file) await rm(file, { force: true });
    }
  }

  private async startMember(
    m: Member,
    spec: EtcdSpec,
    cluster: { state: 'new' | 'existing'; token: string; restoreFile?: string },
  ): Promise<void> {
    clearTimeout(m.restartTimer);
    m.wanted = true;
    await m.sidecar?.stop();
    const memberDir = join(this.options.dir, m.spec.name);
    mkdirSync(memberDir, { recursive: true });
    // Its peers are as planned: https where the cluster was planned with the peer CA, and then its files.
    const peerTls = m.spec.peerUrl.startsWith('https:')
      ? await writeEtcdPeerFiles({
          dir: join(pkiDir(memberDir), 'etcd-peer'),
          secrets: this.options.secrets?.(),
          member: m.spec.name,
          peerUrls: [m.spec.peerUrl],
        })
      : undefined;
    if (m.spec.peerUrl.startsWith('https:') && peerTls === undefined)
      throw new LocalProcessError(
        `member ${m.spec.name} of ${this.options.technicalID} has TLS peers, but no etcd peer CA was delivered`,
        this.options.technicalID,
      );
    const args = sidecarArgs({
      defaults: this.options.defaults,
      spec,
      dataDir: this.dataDir(m),
      etcdLog: join(memberDir, 'etcd.log'),
      member: {
        self: m.spec.name,
        members: (this.members ?? []).map((x) => x.spec),
        token: cluster.token,
        state: cluster.state,
      },
      ...(cluster.restoreFile ? { restoreFile: cluster.restoreFile } : {}),
      ...(peerTls ? { peerTls } : {}),
    });
    const sidecar = await this.options.launch({
      member: m.spec.name,
      args,
      logFile: join(memberDir, 'sidecar.log'),
      ...(spec.restore ? { startTimeoutMs: RESTORE_START_TIMEOUT_MS } : {}),
    });
    m.sidecar = sidecar;
    m.restartDelay = this.options.restartDelayMs ?? 1_000;
    void sidecar.exited.then(() => this.exited(m, sidecar, spec));
  }

  /** A member's sidecar died: start it again after a while, as long as it should run (a kubelet's restart with back-off). */
  private exited(m: Member, sidecar: SidecarProcess, spec: EtcdSpec): void {
    if (m.sidecar !== sidecar || !m.wanted) return;
    delete m.sidecar;
    this.options.log?.({ event: 'etcd-member-exited', technicalID: this.options.technicalID, member: m.spec.name });
    const retry = () => {
      m.restartTimer = setTimeout(() => {
        if (!m.wanted || m.sidecar?.running) return;
        m.restarts += 1;
        // The cluster exists: a member with its data restarts, one without rejoins as a learner.
        const { restore: _restore, ...plain } = spec;
        this.startMember(m, plain, { state: 'existing', token: this.token() }).catch((error: unknown) => {
          this.options.log?.({
            event: 'etcd-member-restart-failed',
            technicalID: this.options.technicalID,
            member: m.spec.name,
            error: messageOf(error),
          });
          m.restartDelay = Math.min(m.restartDelay * 2, 10_000);
          if (m.wanted) retry();
        });
      }, m.restartDelay);
    };
    retry();
  }

  private async allocate(): Promise<Member[]> {
    if (this.members) return this.members;
    const members: Member[] = [];
    // A cluster an earlier agent ran here keeps its members' addresses: they are in every member's data.
    const kept = this.keptUrls();
    const avoid = this.options.plannedElsewhere?.();
    const ports = kept ? [] : await plannedPorts(3 * this.options.members.length, avoid ? { avoid } : {});
    const url = (scheme = 'http') => `${scheme}://127.0.0.1:${ports.shift()!}`;
    // A cluster's peers speak as it was planned, for its life here: its URLs are in every member's data.
    const peers = etcdPeerScheme(this.options.secrets?.());
    for (const placement of this.options.members) {
      const urls = kept?.get(placement.name) ?? { peerUrl: url(peers), clientUrl: url(), privateUrl: url() };
      members.push({
        placement,
        spec: { name: placement.name, ...(placement.zone ? { zone: placement.zone } : {}), ...urls },
        wanted: false,
        restartDelay: this.options.restartDelayMs ?? 1_000,
        restarts: 0,
      });
    }
    this.members = members;
    if (!kept) {
      mkdirSync(this.options.dir, { recursive: true });
      writeFileSync(
        this.urlsFile(),
        JSON.stringify(
          members.map((m) => ({
            name: m.spec.name,
            peerUrl: m.spec.peerUrl,
            clientUrl: m.spec.clientUrl,
            privateUrl: m.spec.privateUrl,
          })),
        ),
      );
    }
    return members;
  }

  private urlsFile(): string {
    return join(this.options.dir, 'member-urls.json');
  }

  /** The members' addresses recorded by an earlier agent, when they are the members wanted now. */
  private keptUrls(): Map<string, { peerUrl: string; clientUrl: string; privateUrl: string }> | undefined {
    let recorded: { name: string; peerUrl: string; clientUrl: string; privateUrl: string }[];
    try {
      recorded = JSON.parse(readFileSync(this.urlsFile(), 'utf8')) as typeof recorded;
    } catch {
      // None recorded: new addresses.
      return undefined;
    }
    const byName = new Map(recorded.map(({ name, ...urls }) => [name, urls]));
    return this.options.members.every((p) => byName.has(p.name)) && byName.size === this.options.members.length
      ? byName
      : undefined;
  }

  private dataDir(m: Member): string {
    return join(this.options.dir, m.spec.name, 'etcd');
  }

  private tokenFile(): string {
    return join(this.options.dir, 'cluster-token');
  }

  private newToken(): string {
    mkdirSync(this.options.dir, { recursive: true });
    const token = `${this.options.technicalID}-${randomUUID().slice(0, 8)}`;
    writeFileSync(this.tokenFile(), token);
    return token;
  }

  private token(): string {
    return existsSync(this.tokenFile()) ? readFileSync(this.tokenFile(), 'utf8').trim() : this.newToken();
  }
}

function memberView(m: Member, status: SidecarStatus | undefined): EtcdMemberView {
  return {
    name: m.spec.name,
    ...(m.spec.zone ? { zone: m.spec.zone } : {}),
    running: m.sidecar?.running ?? false,
    ready: status?.ready ?? false,
    healthy: status?.cluster?.healthy ?? false,
    fenced: status?.etcd.fenced ?? true,
    role: status?.cluster?.role ?? 'unknown',
    clientUrl: m.spec.clientUrl,
  };
}

function portOf(url: string): number {
  return Number(new URL(url).port);
}
