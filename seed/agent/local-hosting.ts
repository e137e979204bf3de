import { rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ownerRecordName, type OwnerCheckResult, type OwnershipTimings } from '../../core/ownership/index.js';
import { durationFlag } from '../backup-restore/duration.js';
import type { OwnerConfig } from './aws-agent.js';
import { freePort } from '../ports.js';
import { ApiServerStandIn } from './apiserver-standin.js';
import type { ApiServerView, ControlPlaneHosting, EtcdSpec, EtcdStarted, EtcdView } from './hosting.js';
import { SidecarProcess } from './sidecar-process.js';

export interface LocalHostingOptions {
  /** This seed's identity: the owner record's value while it owns a shoot. */
  identity: string;
  /** Data dirs and logs go under `<workDir>/<technicalID>/`. */
  workDir: string;
  /** `endpoint` is S3's (and Route 53's unless `route53Endpoint` is given). */
  aws: { endpoint?: string; route53Endpoint?: string; region: string };
  owner: OwnerConfig;
  /** The sidecars' ownership timings and snapshot intervals in ms; defaults are the sidecar's. */
  sidecar?: { ownership?: Partial<OwnershipTimings>; deltaSnapshotInterval?: number; fullSnapshotInterval?: number; compression?: 'gzip' | 'none' };
  /** The gardenless CLI; default the repository's `bin/gardenless`. */
  cliCommand?: readonly string[];
  /** Environment of the sidecars (AWS credentials); default this process's. */
  env?: NodeJS.ProcessEnv;
}

interface Hosted {
  ports: { client: number; peer: number };
  sidecar?: SidecarProcess;
  apiServer?: ApiServerStandIn;
}

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The `local` runtime's processes: per shoot one backup-restore sidecar child (with its real etcd, in
 * its own process group) and one kube-apiserver stand-in, all on 127.0.0.1 and free ports. The client
 * and peer ports of a shoot's etcd stay the same for the agent's life, so a restart or a restore keeps
 * the address the stand-in and tests use.
 */
export class LocalHosting implements ControlPlaneHosting {
  private readonly hosted = new Map<string, Hosted>();

  constructor(private readonly options: LocalHostingOptions) {}

  async startEtcd(spec: EtcdSpec): Promise<EtcdStarted> {
    const id = spec.shoot.technicalID;
    const h = await this.entry(id);
    if (h.sidecar?.running && !spec.restore) return {};
    await h.sidecar?.stop();
    h.sidecar = await SidecarProcess.start({
      technicalID: id,
      command: this.options.cliCommand ?? [join(REPO_ROOT, 'bin/gardenless')],
      args: this.sidecarArgs(spec, h),
      env: { ...(this.options.env ?? process.env) },
      logFile: join(this.options.workDir, id, 'sidecar.log'),
    });
    if (!spec.restore) return {};
    const status = await h.sidecar.status(5_000);
    return status?.restore ? { restoredRevision: status.restore.revision } : {};
  }

  async stopEtcd(technicalID: string, options?: { snapshot?: boolean }): Promise<void> {
    const h = this.hosted.get(technicalID);
    if (options?.snapshot && h?.sidecar?.running) await h.sidecar.fullSnapshot();
    await h?.sidecar?.stop();
    if (h) delete h.sidecar;
  }

  async etcd(technicalID: string): Promise<EtcdView> {
    const sidecar = this.hosted.get(technicalID)?.sidecar;
    if (!sidecar?.running) return { running: false, available: false };
    const status = await sidecar.status();
    if (status === undefined) return { running: true, available: false };
    const lastResult = status.owner.lastResult as OwnerCheckResult | null;
    return {
      running: status.etcd.running,
      available: status.ready && !status.etcd.fenced,
      ...(lastResult ? { ownerCheck: lastResult } : {}),
      clientUrl: sidecar.clientUrl,
    };
  }

  async startApiServer(technicalID: string): Promise<void> {
    const h = await this.entry(technicalID);
    h.apiServer ??= await ApiServerStandIn.start({ technicalID, etcdAvailable: async () => (await this.etcd(technicalID)).available });
  }

  async stopApiServer(technicalID: string): Promise<void> {
    const h = this.hosted.get(technicalID);
    await h?.apiServer?.stop();
    if (h) delete h.apiServer;
  }

  async apiServer(technicalID: string): Promise<ApiServerView> {
    const api = this.hosted.get(technicalID)?.apiServer;
    if (!api) return { running: false, internalProbe: 'Failure' };
    return { running: true, internalProbe: await api.probeInternal(), externalUrl: api.externalUrl };
  }

  /** The stand-in of one shoot, for tests that break its addresses. */
  apiServerStandIn(technicalID: string): ApiServerStandIn | undefined {
    return this.hosted.get(technicalID)?.apiServer;
  }

  /** The sidecar process of one shoot, for tests. */
  sidecar(technicalID: string): SidecarProcess | undefined {
    return this.hosted.get(technicalID)?.sidecar;
  }

  /** Where one shoot's files live on this machine (etcd data, logs); remove() deletes it. */
  dataDir(technicalID: string): string {
    return join(this.options.workDir, technicalID);
  }

  async remove(technicalID: string): Promise<void> {
    await this.stopApiServer(technicalID);
    await this.stopEtcd(technicalID);
    this.hosted.delete(technicalID);
    await rm(join(this.options.workDir, technicalID), { recursive: true, force: true });
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.hosted.keys()].map(async (id) => {
      await this.stopApiServer(id);
      await this.stopEtcd(id);
    }));
  }

  private async entry(technicalID: string): Promise<Hosted> {
    let h = this.hosted.get(technicalID);
    if (!h) {
      h = { ports: { client: await freePort(), peer: await freePort() } };
      this.hosted.set(technicalID, h);
    }
    return h;
  }

  private sidecarArgs(spec: EtcdSpec, h: Hosted): string[] {
    const o = this.options;
    const id = spec.shoot.technicalID;
    const s = o.sidecar ?? {};
    const record = ownerRecordName({ shoot: spec.shoot.name, project: spec.shoot.project, internalDomain: o.owner.internalDomain });
    return [
      'backup-restore', 'serve',
      '--technical-id', id,
      '--owner-record', record,
      '--identity', o.identity,
      '--bucket', spec.bucket,
      '--region', o.aws.region,
      ...(o.aws.endpoint ? ['--s3-endpoint', o.aws.endpoint] : []),
      ...(o.owner.mode === 'api'
        ? ['--owner-mode', 'api', '--hosted-zone-id', o.owner.hostedZoneId, ...(o.aws.route53Endpoint ? ['--route53-endpoint', o.aws.route53Endpoint] : [])]
        : ['--owner-mode', 'dns', ...(o.owner.servers?.length ? ['--dns-server', ...o.owner.servers] : [])]),
      '--data-dir', join(o.workDir, id, 'etcd'),
      '--etcd-log', join(o.workDir, id, 'etcd.log'),
      '--client-port', String(h.ports.client),
      '--peer-port', String(h.ports.peer),
      ...durationArg('--owner-check-interval', s.ownership?.ownerCheckInterval),
      ...durationArg('--unknown-grace', s.ownership?.unknownGrace),
      ...durationArg('--check-timeout', s.ownership?.checkTimeout),
      ...durationArg('--delta-snapshot-interval', s.deltaSnapshotInterval),
      ...durationArg('--full-snapshot-interval', s.fullSnapshotInterval),
      ...(s.compression ? ['--compression', s.compression] : []),
      ...(spec.restore ? ['--restore', ...(spec.restore.expectedLastRevision === undefined ? [] : ['--expected-revision', String(spec.restore.expectedLastRevision)])] : []),
    ];
  }
}

function durationArg(flag: string, ms: number | undefined): string[] {
  return ms === undefined ? [] : [flag, durationFlag(ms)];
}
