import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GardenClient } from '../adapters/http/garden-client.js';
import { emulatorEnv } from '../local/aws-env.js';
import { PROJECT_ROOT } from '../local/emulator.js';
import { signalProcessGroup } from '../seed/agent/process-group.js';
import { durationFlag } from '../seed/backup-restore/duration.js';
import { FAKE_KUBE_BIN_DIR, REAL_KUBE_BIN_DIR } from './kube/binaries.js';
import { registerLocalSeed } from './local-seed.js';
import { processTree } from './scenario/process-tree.js';

export interface AgentProcessOptions {
  seed: string;
  deployment: {
    apiUrl: string;
    awsEndpoint: string;
    region: string;
    outputs: { HostedZoneId: string; InternalDomain: string };
  };
  workDir: string;
  heartbeatIntervalSeconds: number;
  /** The sidecars' owner checks; absent: the agent's defaults (5 s checks, 30 s grace). */
  ownership?: { ownerCheckInterval: number; unknownGrace: number };
  /** Default `2s`; `false`: the agent's default (20 s). */
  deltaSnapshotInterval?: string | false;
  /** The sidecars' write guard limit (`--backup-lag-limit`); absent: the agent's default (the delta interval + 30 s). */
  backupLagLimit?: string;
  /**
   * The Kubernetes components the agent runs per shoot: `fake` (default; harness/fixtures/fake-kube, for tests
   * about the garden, the agent and etcd) or `real` (the built binaries: a few hundred megabytes each).
   */
  kube?: 'fake' | 'real';
  /** The seed's load balancer: its loopback address and the landscape's one port. */
  loadBalancer?: { host: string; port: number };
}

/** A seed agent's own processes below `rootPid`: the launcher and the node process running `seed-agent`, not its sidecars. */
export function agentPids(rootPid: number): number[] {
  return processTree(rootPid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('seed-agent');
    } catch {
      return false;
    }
  });
}

/**
 * The real seed agent as its own process (`gardenless seed-agent`, as the local landscape runs it), so that
 * a test can freeze the agent alone: SIGSTOP reaches the agent (and the tsx launcher in front of it), not
 * the sidecars and etcds it started, which run in their own process groups and keep serving.
 */
export class AgentProcess {
  private child?: ChildProcess;
  private frozen: number[] = [];

  constructor(private readonly options: AgentProcessOptions) {}

  start(): void {
    const o = this.options;
    mkdirSync(o.workDir, { recursive: true });
    const log = openSync(this.logFile, 'a');
    this.child = spawn(
      join(PROJECT_ROOT, 'bin', 'gardenless'),
      [
        '--api-url',
        o.deployment.apiUrl,
        '--region',
        o.deployment.region,
        'seed-agent',
        '--seed',
        o.seed,
        '--aws-endpoint',
        o.deployment.awsEndpoint,
        '--hosted-zone-id',
        o.deployment.outputs.HostedZoneId,
        '--internal-domain',
        o.deployment.outputs.InternalDomain,
        '--work-dir',
        o.workDir,
        '--heartbeat-interval',
        String(o.heartbeatIntervalSeconds),
        ...(o.deltaSnapshotInterval === false ? [] : ['--delta-snapshot-interval', o.deltaSnapshotInterval ?? '2s']),
        ...(o.backupLagLimit ? ['--backup-lag-limit', o.backupLagLimit] : []),
        ...(o.ownership
          ? [
              '--owner-check-interval',
              durationFlag(o.ownership.ownerCheckInterval),
              '--unknown-grace',
              durationFlag(o.ownership.unknownGrace),
            ]
          : []),
        '--kube-bin-dir',
        o.kube === 'real' ? REAL_KUBE_BIN_DIR : FAKE_KUBE_BIN_DIR,
        ...(o.loadBalancer ? ['--lb-address', o.loadBalancer.host, '--lb-port', String(o.loadBalancer.port)] : []),
      ],
      {
        cwd: PROJECT_ROOT,
        env: { ...process.env, ...emulatorEnv(o.deployment.awsEndpoint, o.deployment.region) },
        stdio: ['ignore', log, log],
        detached: true,
      },
    );
  }

  /** Where the agent's output goes. */
  get logFile(): string {
    return join(this.options.workDir, 'agent.log');
  }

  agentPids(): number[] {
    return this.child?.pid ? agentPids(this.child.pid) : [];
  }

  /** Every process below the agent (sidecars, etcds), which a freeze leaves running. */
  descendants(): number[] {
    return this.child?.pid ? processTree(this.child.pid).filter((p) => !this.agentPids().includes(p)) : [];
  }

  /** SIGKILL to the agent and every process below it (sidecars, etcds): nothing shuts down cleanly. How many were killed. */
  kill(): number {
    const pids = [...this.agentPids(), ...this.descendants()];
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone with its parent.
      }
    }
    return pids.length;
  }

  freeze(): number[] {
    this.frozen = this.agentPids();
    for (const pid of this.frozen) process.kill(pid, 'SIGSTOP');
    return this.frozen;
  }

  thaw(): void {
    for (const pid of this.frozen) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // Gone already.
      }
    }
    this.frozen = [];
  }

  /** Thaws and stops the agent gracefully (it stops its sidecars and etcds); kills the rest after `timeoutMs`. */
  async stop(timeoutMs = 20_000): Promise<void> {
    const child = this.child;
    if (!child?.pid) return;
    this.thaw();
    const tree = processTree(child.pid);
    const exited =
      child.exitCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));
    signalProcessGroup(child.pid, 'SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, timeoutMs))]);
    for (const pid of tree) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Exited with its agent.
      }
    }
  }
}

/**
 * A seed of a test: its backup bucket (kept when it exists), the seed registered through the garden API
 * (`body`, which must be new), and its agent started as its own process in `<workDir>/<seed>`.
 */
export async function registerSeedWithAgent(input: {
  garden: GardenClient;
  seed: string;
  body: Record<string, unknown>;
  workDir: string;
  deployment: AgentProcessOptions['deployment'];
  ownership: AgentProcessOptions['ownership'];
  heartbeatIntervalSeconds?: number;
  backupLagLimit?: string;
  kube?: AgentProcessOptions['kube'];
  loadBalancer?: AgentProcessOptions['loadBalancer'];
}): Promise<AgentProcess> {
  const { seed } = input;
  await registerLocalSeed({ garden: input.garden, deployment: input.deployment, name: seed, body: input.body });
  const agent = new AgentProcess({
    seed,
    deployment: input.deployment,
    workDir: join(input.workDir, seed),
    heartbeatIntervalSeconds: input.heartbeatIntervalSeconds ?? 2,
    ...(input.ownership ? { ownership: input.ownership } : {}),
    ...(input.backupLagLimit ? { backupLagLimit: input.backupLagLimit } : {}),
    ...(input.kube ? { kube: input.kube } : {}),
    ...(input.loadBalancer ? { loadBalancer: input.loadBalancer } : {}),
  });
  agent.start();
  return agent;
}
