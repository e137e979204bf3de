import { Command, Option } from 'commander';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ownershipTimings } from '../core/ownership/index.js';
import { readEndpoints, LANDSCAPE_DIR } from '../local/landscape-file.js';
import { parseDuration } from '../seed/backup-restore/duration.js';
import { localSeedAgent } from '../seed/agent/local-agent.js';
import type { OwnerConfig } from '../seed/agent/aws-agent.js';
import { clientFor, type CliOptions } from './config.js';

interface SeedAgentFlags {
  seed: string;
  runtime: 'local';
  workDir?: string;
  awsEndpoint?: string;
  ownerMode: 'api' | 'dns';
  hostedZoneId?: string;
  internalDomain?: string;
  dnsServer?: string[];
  backupBucket?: string;
  heartbeatInterval: string;
  ownerCheckInterval?: string;
  unknownGrace?: string;
  deltaSnapshotInterval?: string;
  fullSnapshotInterval?: string;
}

function log(entry: Record<string, unknown>): void {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`);
}

/**
 * `gardenless seed-agent --seed NAME`: the seed agent with the `local` runtime. The seed must be
 * registered through the API first (the agent registers nothing; its first heartbeat learns the seed's
 * identity and command queue). Against the local landscape every endpoint defaults from its file.
 */
export function registerSeedAgentCommand(program: Command): Command {
  return program
    .command('seed-agent')
    .description("run a seed's agent: heartbeats, its command queue, control planes on this machine (runtime local)")
    .requiredOption('--seed <name>', 'the registered seed this agent runs')
    .addOption(new Option('--runtime <runtime>', 'what the agent acts on').choices(['local']).default('local'))
    .option('--work-dir <dir>', 'data dirs and logs of the control planes (default .landscape/seeds/<seed>)')
    .option('--aws-endpoint <url>', 'AWS endpoint (the emulator); default the local landscape\'s, or AWS')
    .addOption(new Option('--owner-mode <mode>', 'how sidecars and restores read owner records').choices(['api', 'dns']).default('api'))
    .option('--hosted-zone-id <id>', 'API mode: the zone of the owner records (default the landscape\'s)')
    .option('--internal-domain <domain>', 'the owner records\' domain (default the landscape\'s)')
    .option('--dns-server <server...>', 'DNS mode: name servers')
    .option('--backup-bucket <name>', 'checked for BackupBucketsReady (default gl-backup-<seed>)')
    .option('--heartbeat-interval <seconds>', 'seed heartbeat period', '10')
    .option('--owner-check-interval <duration>', 'sidecars: owner check period')
    .option('--unknown-grace <duration>', 'sidecars: how long an unanswered check keeps etcd serving')
    .option('--delta-snapshot-interval <duration>', 'sidecars: delta snapshot period')
    .option('--full-snapshot-interval <duration>', 'sidecars: full snapshot period')
    .action(async (flags: SeedAgentFlags, cmd: Command) => {
      const global = cmd.optsWithGlobals<CliOptions & SeedAgentFlags>();
      const local = readEndpoints();
      const region = global.region ?? process.env.AWS_REGION ?? local?.region ?? 'us-east-1';
      const endpoint = flags.awsEndpoint ?? process.env.AWS_ENDPOINT_URL ?? local?.awsEndpoint;
      const internalDomain = flags.internalDomain ?? local?.outputs.InternalDomain;
      if (!internalDomain) throw new Error('no internal domain: pass --internal-domain or start the local landscape');
      const owner: OwnerConfig =
        flags.ownerMode === 'api'
          ? { mode: 'api', internalDomain, hostedZoneId: flags.hostedZoneId ?? local?.outputs.HostedZoneId ?? '' }
          : { mode: 'dns', internalDomain, ...(flags.dnsServer ? { servers: flags.dnsServer } : {}) };
      const usingEmulator = endpoint !== undefined && !process.env.AWS_ACCESS_KEY_ID;
      const workDir = flags.workDir ?? join(LANDSCAPE_DIR, 'seeds', flags.seed);
      mkdirSync(workDir, { recursive: true });
      const ms = (text: string | undefined, flag: string) => (text === undefined ? undefined : parseDuration(text, flag));
      // Refused here when they cannot work, before any sidecar starts.
      const ownership = ownershipTimings({ ownerCheckInterval: ms(flags.ownerCheckInterval, '--owner-check-interval'), unknownGrace: ms(flags.unknownGrace, '--unknown-grace') });
      const sidecar = {
        ownership: { ownerCheckInterval: ownership.ownerCheckInterval, unknownGrace: ownership.unknownGrace },
        deltaSnapshotInterval: ms(flags.deltaSnapshotInterval, '--delta-snapshot-interval'),
        fullSnapshotInterval: ms(flags.fullSnapshotInterval, '--full-snapshot-interval'),
      };
      const { agent } = localSeedAgent({
        seed: flags.seed,
        garden: clientFor(global),
        aws: { region, ...(endpoint ? { endpoint } : {}), ...(usingEmulator ? { credentials: async () => ({ accessKeyId: 'test', secretAccessKey: 'test' }) } : {}) },
        owner,
        backupBucket: flags.backupBucket ?? `gl-backup-${flags.seed}`,
        workDir,
        heartbeatIntervalMs: Number(flags.heartbeatInterval) * 1000,
        sidecar,
        // The sidecars are children: they need the emulator's credentials in their environment.
        ...(usingEmulator ? { env: { ...process.env, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_REGION: region } } : {}),
        log,
      });
      await agent.start();
      await new Promise<void>((resolve) => {
        const shutdown = (signal: string) => {
          log({ event: 'shutdown', signal });
          // Stopping the agent stops every sidecar's process group and every stand-in.
          void agent.stop().then(resolve, (error: unknown) => {
            log({ event: 'shutdown-failed', error: String(error) });
            resolve();
          });
        };
        process.once('SIGTERM', () => shutdown('SIGTERM'));
        process.once('SIGINT', () => shutdown('SIGINT'));
      });
    });
}
