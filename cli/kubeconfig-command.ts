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
export function registerKubeconfigCommand(
  shoot: Command,
  connect: () => Promise<Api>,
  output: () => OutputFormat,
): void {
  shoot
    .command('kubeconfig <ref>')
    .description("a kubeconfig whose server is the shoot's API domain (api.<shoot>.<project>.<external domain>)")
    .option(
      '--external-domain <domain>',
      "the deployment's external domain, while the shoot advertises no address yet (default GARDENLESS_EXTERNAL_DOMAIN, or the local landscape's)",
    )
    .action(async (ref: string, flags: { externalDomain?: string }) => {
      const [project, name] = splitShoot(ref);
      const api = await connect();
      const shootObject = await api.expect<Shoot>('GET', `/projects/${project}/shoots/${name}`);
      // The garden advertises the URL once the API record points at a serving plane; before that, build it.
      const advertised = shootObject.status.advertisedAddresses?.find((a) => a.name === 'external')?.url;
      const server = advertised ?? (await builtServer(api, shootObject, flags.externalDomain));
      console.log(await serialize(shootKubeconfig({ project, name, server }), output() === 'json' ? 'json' : 'yaml'));
    });
}

/** The API domain from the deployment's external domain, on the port the hosting seed reports for the plane. */
async function builtServer(api: Api, shoot: Shoot, flag: string | undefined): Promise<string> {
  const externalDomain = flag || process.env.GARDENLESS_EXTERNAL_DOMAIN || readEndpoints()?.outputs.ExternalDomain;
  if (!externalDomain) throw new Error('No external domain: pass --external-domain or set GARDENLESS_EXTERNAL_DOMAIN');
  const seedName = shoot.status.seedName;
  const seed = seedName ? await api.expect<Seed>('GET', `/seeds/${seedName}`) : undefined;
  const externalUrl = seed?.status.controlPlanes?.find(
    (cp) => cp.technicalID === shoot.status.technicalID,
  )?.externalUrl;
  const domain = apiDomainName({ shoot: shoot.metadata.name, project: shoot.metadata.project, externalDomain });
  // Without a report (hibernated, not yet created) the load balancer's default: https on 443.
  return externalUrl ? apiDomainUrl(domain, externalUrl) : `https://${domain}`;
}
