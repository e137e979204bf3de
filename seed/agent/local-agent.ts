import { S3Client } from '@aws-sdk/client-s3';
import { s3Backup } from '../backup-restore/aws.js';
import type { SeedAgent } from './agent.js';
import { awsSeedAgent, type AwsSeedAgentOptions, type OwnerConfig } from './aws-agent.js';
import { LocalHosting, type LocalHostingOptions } from './local-hosting.js';
import { FilePlaneStore } from './plane-store.js';

export interface LocalSeedAgentOptions extends Omit<AwsSeedAgentOptions, 'hosting' | 'owner' | 'wrap'> {
  /** The sidecars check it, and restores activate only while it names this seed. */
  owner: OwnerConfig;
  workDir: string;
  sidecar?: LocalHostingOptions['sidecar'];
  cliCommand?: readonly string[];
  /** Environment of the sidecar processes; default this process's (plus the credentials when given as a value). */
  env?: NodeJS.ProcessEnv;
  /** Where the seed's load balancer for its kube-apiservers listens (see LocalHostingOptions). */
  loadBalancer?: LocalHostingOptions['loadBalancer'];
  /** Where the Kubernetes binaries are (see LocalHostingOptions). */
  kubeBinDir?: string;
}

/** A seed agent with the `local` runtime: real etcd per shoot behind its sidecar, on this machine. */
export function localSeedAgent(options: LocalSeedAgentOptions): { agent: SeedAgent; hosting: () => LocalHosting } {
  const { workDir, sidecar, cliCommand, env, loadBalancer, kubeBinDir, ...agentOptions } = options;
  const s3Endpoint = options.aws.endpoints?.s3 ?? options.aws.endpoint;
  const route53Endpoint = options.aws.endpoints?.route53 ?? options.aws.endpoint;
  let hosting: LocalHosting | undefined;
  // The agent's own S3 access (its credentials), for the one download a cluster's restore shares.
  const s3 = new S3Client({
    region: options.aws.region,
    ...(s3Endpoint ? { endpoint: s3Endpoint, forcePathStyle: true } : {}),
    ...(options.aws.credentials ? { credentials: options.aws.credentials } : {}),
  });
  const agent = awsSeedAgent({
    ...agentOptions,
    // A restarted agent finds its control planes in its work dir again (the local runtime's only memory).
    planeStore: new FilePlaneStore({ workDir, ...(agentOptions.log ? { log: agentOptions.log } : {}) }),
    hosting: (identity) =>
      (hosting = new LocalHosting({
        identity,
        workDir,
        aws: {
          region: options.aws.region,
          ...(s3Endpoint ? { endpoint: s3Endpoint } : {}),
          ...(route53Endpoint && route53Endpoint !== s3Endpoint ? { route53Endpoint } : {}),
        },
        owner: options.owner,
        ...(sidecar ? { sidecar } : {}),
        ...(cliCommand ? { cliCommand } : {}),
        ...(env ? { env } : {}),
        ...(loadBalancer ? { loadBalancer } : {}),
        ...(kubeBinDir ? { kubeBinDir } : {}),
        seedName: agentOptions.seed,
        backups: (bucket) => s3Backup({ bucket, client: s3 }),
        ...(agentOptions.log ? { log: agentOptions.log } : {}),
      })),
  });
  return {
    agent,
    hosting: () => {
      if (!hosting) throw new Error('the agent has not started yet');
      return hosting;
    },
  };
}
