import type { Command } from 'commander';
import { parse } from 'yaml';
import type { KubeconfigResponse } from '../core/kubeconfig/request.js';
import { parseDuration } from '../seed/backup-restore/duration.js';
import type { Api } from './api.js';
import type { OutputFormat } from './config.js';
import { serialize } from './output.js';
import { splitShoot } from './refs.js';

/** `--expiration 1h` as the API takes it: whole seconds. */
export function expirationSeconds(text: string): number {
  const ms = parseDuration(text, '--expiration');
  if (ms % 1000 !== 0) throw new Error(`--expiration: "${text}" is not a whole number of seconds`);
  return ms / 1000;
}

/** The kubeconfig an answer carries, as the YAML kubectl reads. */
export function kubeconfigOf(answer: Pick<KubeconfigResponse, 'status'>): string {
  return Buffer.from(answer.status.kubeconfig, 'base64').toString('utf8');
}

/**
 * `gardenless shoot kubeconfig <project>/<name> [--viewer] [--expiration 1h]`, added to the `shoot` command:
 * the garden's `adminkubeconfig` (or `viewerkubeconfig`) subresource, printed as kubectl reads it. Its server
 * is the shoot's API domain, so it keeps working across migrations; its certificate expires.
 */
export function registerKubeconfigCommand(
  shoot: Command,
  connect: () => Promise<Api>,
  output: () => OutputFormat,
): void {
  shoot
    .command('kubeconfig <ref>')
    .description(
      "a kubeconfig for the shoot's API domain (api.<shoot>.<project>.<external domain>) with a client certificate that expires",
    )
    .option('--viewer', 'read-only (every resource but Secrets) instead of cluster-admin')
    .option('--expiration <duration>', "how long the certificate is valid: 10m to 24h (Gardener's bounds)", '1h')
    .action(async (ref: string, flags: { viewer?: boolean; expiration: string }) => {
      const [project, name] = splitShoot(ref);
      const seconds = expirationSeconds(flags.expiration);
      const role = flags.viewer ? 'viewer' : 'admin';
      const api = await connect();
      const answer = await api.expect<KubeconfigResponse>(
        'POST',
        `/projects/${project}/shoots/${name}/${role}kubeconfig`,
        { body: { spec: { expirationSeconds: seconds } } },
      );
      const kubeconfig = kubeconfigOf(answer);
      process.stdout.write(output() === 'json' ? `${await serialize(parse(kubeconfig), 'json')}\n` : kubeconfig);
    });
}
