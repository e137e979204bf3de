import type { Command } from 'commander';
import { apiDomainName, apiDomainUrl } from '../core/dns/api-domain.js';
import type { Seed } from '../core/model/seed.js';
import type { Shoot } from '../core/model/shoot.js';
import { readEndpoints } from '../local/landscape-file.js';
import type { Api } from './api.js';
import type { OutputFormat } from './config.js';
import { serialize } from './output.js';
import { splitShoot } from './refs.js';

/**
 * A kubeconfig for the shoot whose server is its API domain, as users and kubelets reach it, never a
 * seed's load balancer: it keeps working across migrations. The scheme and port are those of the serving
 * seed's load balancer (443 on a real one). No credentials: gardenless issues none.
 */
export function shootKubeconfig(options: { project: string; name: string; server: string }): Record<string, unknown> {
  const context = `${options.project}--${options.name}`;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: context, cluster: { server: options.server } }],
    contexts: [{ name: context, context: { cluster: context, user: context } }],
    users: [{ name: context, user: {} }],
    'current-context': context,
  };
}

/** `gardenless shoot kubeconfig <project>/<name>`, added to the `shoot` command. */
export function registerKubeconfigCommand(shoot: Command, connect: () => Promise<Api>, output: () => OutputFormat): void {
  shoot
    .command('kubeconfig <ref>')
    .description("a kubeconfig whose server is the shoot's API domain (api.<shoot>.<project>.<external domain>)")
    .option('--external-domain <domain>', 'the deployment\'s external domain (default GARDENLESS_EXTERNAL_DOMAIN, or the local landscape\'s)')
    .action(async (ref: string, flags: { externalDomain?: string }) => {
      const [project, name] = splitShoot(ref);
      const externalDomain = flags.externalDomain || process.env.GARDENLESS_EXTERNAL_DOMAIN || readEndpoints()?.outputs.ExternalDomain;
      if (!externalDomain) throw new Error('No external domain: pass --external-domain or set GARDENLESS_EXTERNAL_DOMAIN');
      const api = await connect();
      const shootObject = await api.expect<Shoot>('GET', `/projects/${project}/shoots/${name}`);
      const seedName = shootObject.status.seedName;
      const seed = seedName ? await api.expect<Seed>('GET', `/seeds/${seedName}`) : undefined;
      const externalUrl = seed?.status.controlPlanes?.find((cp) => cp.technicalID === shootObject.status.technicalID)?.externalUrl;
      const domain = apiDomainName({ shoot: name, project, externalDomain });
      // Without a report (hibernated, not yet created) the load balancer's default: https on 443.
      const server = externalUrl ? apiDomainUrl(domain, externalUrl) : `https://${domain}`;
      console.log(await serialize(shootKubeconfig({ project, name, server }), output() === 'json' ? 'json' : 'yaml'));
    });
}
