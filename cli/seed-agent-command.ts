import { Command, Option } from 'commander';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ownershipTimings } from '../core/ownership/index.js';
import { readEndpoints, LANDSCAPE_DIR } from '../local/landscape-file.js';
import { parseDuration } from '../seed/backup-restore/duration.js';
import type { SeedAgent } from '../seed/agent/agent.js';
import { localSeedAgent } from '../seed/agent/local-agent.js';
import type { OwnerConfig } from '../seed/agent/aws-agent.js';
import { kubernetesSeedAgent } from '../seed/kubernetes/agent.js';
import { readImageVector } from '../seed/kubernetes/image-vector.js';
import { SeedAgentConfigError } from '../seed/agent/errors.js';
import { startHealthServer } from '../seed/agent/health.js';
import { portNumber } from '../seed/ports.js';
import { clientFor, type CliOptions } from './config.js';
import { logLine, untilSignalled } from './daemon.js';
import { emulatorCredentials, emulatorCredentialsEnv } from '../local/aws-env.js';

interface SeedAgentFlags {
  seed: string;
  runtime: 'local' | 'kubernetes';
  kubeconfig?: string;
  inCluster?: boolean;
  imageVector?: string;
  zones?: string[];
  namespacePrefix?: string;
  sidecarCredentialsFromEnv?: boolean;
  workDir?: string;
  awsEndpoint?: string;
  ownerMode?: 'api' | 'dns';
  hostedZoneId?: string;
  internalDomain?: string;
  dnsServer?: string[];
  backupBucket?: string;
  heartbeatInterval: string;
  ownerCheckInterval?: string;
  unknownGrace?: string;
  deltaSnapshotInterval?: string;
  fullSnapshotInterval?: string;
  backupLagLimit?: string;
  lbAddress?: string;
  lbPort?: string;
  kubeBinDir?: string;
  healthPort?: string;
  healthHost?: string;
}

/**
 * `gardenless seed-agent --seed NAME`: the seed agent with the `local` runtime (control planes on this
 * machine) or the `kubernetes` runtime (`--kubeconfig FILE` or `--in-cluster`: control planes as objects
 * on the seed cluster). The seed must be registered through the API first (the agent registers nothing;
 * its first heartbeat learns the seed's identity and command queue). Against the local landscape every
 * endpoint defaults from its file.
 */
export function registerSeedAgentCommand(program: Command): Command {
  return program
    .command('seed-agent')
    .description(
      "run a seed's agent: heartbeats, its command queue, control planes on this machine (runtime local) or on a Kubernetes seed (runtime kubernetes)",
    )
    .requiredOption('--seed <name>', 'the registered seed this agent runs')
    .addOption(
      new Option('--runtime <runtime>', 'what the agent acts on').choices(['local', 'kubernetes']).default('local'),
    )
    .option('--kubeconfig <file>', 'kubernetes: the seed cluster (default KUBECONFIG)')
    .option('--in-cluster', "kubernetes: the agent runs in the seed, with its pod's ServiceAccount")
    .option('--image-vector <file>', 'kubernetes: image overrides (YAML or JSON {images: [{name, repository, tag}]})')
    .option('--zones <zone...>', "kubernetes: the seed's zones (default: its nodes' topology.kubernetes.io/zone)")
    .option('--namespace-prefix <prefix>', 'kubernetes: before each shoot namespace, where seeds share a cluster')
    .option(
      '--sidecar-credentials-from-env',
      "kubernetes: give the etcd pods' sidecars this agent's AWS credentials from its environment (a Secret per shoot namespace; not with IRSA or Pod Identity)",
    )
    .option('--work-dir <dir>', 'data dirs and logs of the control planes (default .landscape/seeds/<seed>)')
    .option('--aws-endpoint <url>', "AWS endpoint (the emulator); default the local landscape's, or AWS")
    .addOption(
      new Option(
        '--owner-mode <mode>',
        'how sidecars and restores read owner records (default: dns; api against the emulator, which serves no DNS)',
      ).choices(['api', 'dns']),
    )
    .option('--hosted-zone-id <id>', "API mode: the zone of the owner records (default the landscape's)")
    .option('--internal-domain <domain>', "the owner records' domain (default the landscape's)")
    .option('--dns-server <server...>', 'DNS mode: name servers')
    .option('--backup-bucket <name>', 'checked for BackupBucketsReady (default gl-backup-<seed>)')
    .option('--heartbeat-interval <seconds>', 'seed heartbeat period', '10')
    .option('--owner-check-interval <duration>', 'sidecars: owner check period')
    .option('--unknown-grace <duration>', 'sidecars: how long an unanswered check keeps etcd serving')
    .option('--delta-snapshot-interval <duration>', 'sidecars: delta snapshot period')
    .option('--full-snapshot-interval <duration>', 'sidecars: full snapshot period')
    .option(
      '--backup-lag-limit <duration>',
      'sidecars: refuse writes while the oldest write not yet uploaded is older than this (default: the delta interval + 30s)',
    )
    .option(
      '--lb-address <address>',
      "local: the loopback address of this seed's kube-apiserver load balancer (default 127.0.0.1), so that API records tell seeds apart",
    )
    .option(
      '--lb-port <port>',
      "local: the load balancer's port, the same on every seed of a landscape (default a free one)",
    )
    .option(
      '--kube-bin-dir <dir>',
      'local: where kube-apiserver, kube-controller-manager and kube-scheduler are (default the ones scripts/build-kube.sh builds)',
    )
    .option(
      '--health-port <port>',
      'serve /healthz (liveness) and /readyz (readiness) on this port, plain HTTP (default 0: none)',
    )
    .option(
      '--health-host <host>',
      'address of the health endpoint (default: 0.0.0.0 with --in-cluster, so that the kubelet probes the pod IP; else 127.0.0.1)',
    )
    .action(async (flags: SeedAgentFlags, cmd: Command) => {
      const global = cmd.optsWithGlobals<CliOptions & SeedAgentFlags>();
      const local = readEndpoints();
      const region = global.region ?? process.env.AWS_REGION ?? local?.region ?? 'us-east-1';
      const endpoint = flags.awsEndpoint ?? process.env.AWS_ENDPOINT_URL ?? local?.awsEndpoint;
      const internalDomain = flags.internalDomain ?? local?.outputs.InternalDomain;
      if (!internalDomain) throw new Error('no internal domain: pass --internal-domain or start the local landscape');
      const usingEmulator = endpoint !== undefined && !process.env.AWS_ACCESS_KEY_ID;
      const owner: OwnerConfig =
        (flags.ownerMode ?? defaultOwnerMode(endpoint)) === 'api'
          ? { mode: 'api', internalDomain, hostedZoneId: flags.hostedZoneId ?? local?.outputs.HostedZoneId ?? '' }
          : { mode: 'dns', internalDomain, ...(flags.dnsServer ? { servers: flags.dnsServer } : {}) };
      const healthPort = flags.healthPort === undefined ? 0 : portNumber(flags.healthPort);
      if (healthPort === undefined)
        throw new SeedAgentConfigError(`--health-port: "${flags.healthPort}" is not a port`, 'health-port');
      const ms = (text: string | undefined, flag: string) =>
        text === undefined ? undefined : parseDuration(text, flag);
      // Refused here when they cannot work, before any sidecar starts.
      const ownership = ownershipTimings({
        ownerCheckInterval: ms(flags.ownerCheckInterval, '--owner-check-interval'),
        unknownGrace: ms(flags.unknownGrace, '--unknown-grace'),
      });
      const sidecar = {
        ownership: { ownerCheckInterval: ownership.ownerCheckInterval, unknownGrace: ownership.unknownGrace },
        deltaSnapshotInterval: ms(flags.deltaSnapshotInterval, '--delta-snapshot-interval'),
        fullSnapshotInterval: ms(flags.fullSnapshotInterval, '--full-snapshot-interval'),
        backupLagLimit: ms(flags.backupLagLimit, '--backup-lag-limit'),
      };
      const aws = {
        region,
        ...(endpoint ? { endpoint } : {}),
        ...(usingEmulator ? { credentials: emulatorCredentials() } : {}),
      };
      const common = {
        seed: flags.seed,
        garden: await clientFor(global),
        aws,
        owner,
        backupBucket: flags.backupBucket ?? `gl-backup-${flags.seed}`,
        heartbeatIntervalMs: Number(flags.heartbeatInterval) * 1000,
        log: logLine,
      };
      let agent: SeedAgent;
      if (flags.runtime === 'kubernetes') {
        const kubeconfig = flags.kubeconfig ?? process.env.KUBECONFIG;
        if (!flags.inCluster && !kubeconfig)
          throw new Error('runtime kubernetes needs --kubeconfig FILE (or KUBECONFIG) or --in-cluster');
        ({ agent } = await kubernetesSeedAgent({
          ...common,
          kube: flags.inCluster ? { inCluster: true } : { kubeconfig: kubeconfig! },
          ...(flags.imageVector ? { images: readImageVector(flags.imageVector) } : {}),
          ...(flags.zones ? { zones: flags.zones } : {}),
          ...(flags.namespacePrefix ? { namespacePrefix: flags.namespacePrefix } : {}),
          ...(flags.sidecarCredentialsFromEnv ? { sidecarCredentials: awsEnvironment() } : {}),
          // The etcd pods' sidecars get the same timings as arguments.
          sidecar: { ...sidecar, ...(endpoint ? { s3Endpoint: endpoint } : {}) },
        }));
      } else {
        const workDir = flags.workDir ?? join(LANDSCAPE_DIR, 'seeds', flags.seed);
        mkdirSync(workDir, { recursive: true });
        ({ agent } = localSeedAgent({
          ...common,
          workDir,
          sidecar,
          ...(flags.lbAddress || flags.lbPort
            ? {
                loadBalancer: {
                  ...(flags.lbAddress ? { host: flags.lbAddress } : {}),
                  ...(flags.lbPort ? { port: Number(flags.lbPort) } : {}),
                },
              }
            : {}),
          ...(flags.kubeBinDir ? { kubeBinDir: flags.kubeBinDir } : {}),
          // The sidecars are children: they need the emulator's credentials in their environment.
          ...(usingEmulator ? { env: { ...process.env, ...emulatorCredentialsEnv(region) } } : {}),
        }));
      }
      // Before the start, so that a start that hangs fails the liveness probe instead of refusing it.
      const health =
        healthPort === 0
          ? undefined
          : await startHealthServer({
              progress: () => agent.progress(),
              port: healthPort,
              host: flags.healthHost ?? (flags.inCluster ? '0.0.0.0' : '127.0.0.1'),
            });
      if (health) logLine({ event: 'health-endpoint', url: health.url });
      try {
        await agent.start();
      } catch (error) {
        // A listening endpoint would keep the process alive: the start's failure must end it.
        await health?.close();
        throw error;
      }
      // Stopping the agent stops every sidecar's and component's process group and the load balancer (local); a kubernetes seed's control planes stay.
      await untilSignalled(async () => {
        await agent.stop();
        await health?.close();
      });
    });
}

/** The AWS credentials in this process's environment, as a sidecar's environment takes them. */
function awsEnvironment(): Record<string, string> {
  const names = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'] as const;
  const env = Object.fromEntries(names.flatMap((n) => (process.env[n] ? [[n, process.env[n]]] : [])));
  if (!env.AWS_ACCESS_KEY_ID || !env.AWS_SECRET_ACCESS_KEY)
    throw new Error('--sidecar-credentials-from-env: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not both set');
  return env;
}

/**
 * How the agent reads owner records unless told: through DNS on AWS (the Route 53 API allows 5 requests a
 * second per account, and every sidecar checks its record every few seconds: docs/design.md section 4);
 * through the Route 53 API against an AWS endpoint of its own, the emulator, which serves no DNS. Credentials
 * in the environment say nothing: the landscape, tests and benchmarks pass the emulator's.
 */
export function defaultOwnerMode(awsEndpoint: string | undefined): 'api' | 'dns' {
  return awsEndpoint === undefined ? 'dns' : 'api';
}
