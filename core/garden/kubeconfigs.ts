import { commandShoot } from '../commands/build.js';
import { ConflictError } from '../errors.js';
import { issueKubeconfig, type KubeconfigRole } from '../kubeconfig/issue.js';
import {
  DEFAULT_EXPIRATION_SECONDS,
  KUBECONFIG_API_VERSION,
  type KubeconfigRequest,
  type KubeconfigResponse,
} from '../kubeconfig/request.js';
import type { Shoot } from '../model/shoot.js';
import type { ShootSecretsKeeper } from '../shootstate/secrets-keeper.js';
import type { Clock } from './context.js';

export interface ShootKubeconfigsOptions {
  /** Reads a shoot; a missing one is NotFound (404). */
  getShoot: (project: string, name: string) => Promise<Shoot>;
  secrets: ShootSecretsKeeper;
  clock: Clock;
  /** The local landscape's name-resolving proxy, written into every kubeconfig as `proxy-url` (none on AWS). */
  proxyUrl?: string;
}

/**
 * Gardener's `shoots/adminkubeconfig` and `shoots/viewerkubeconfig`: a kubeconfig whose server is the shoot's
 * advertised API domain and whose user is a short-lived client certificate from the shoot's client CA. Nothing
 * is stored: a kubeconfig is revoked only by its expiry (or by rotating the CA), as in Gardener.
 */
export class ShootKubeconfigs {
  constructor(private readonly options: ShootKubeconfigsOptions) {}

  async issue(input: {
    project: string;
    name: string;
    role: KubeconfigRole;
    /** The caller as IAM authenticated it: the certificate's CN. */
    user: string;
    request: KubeconfigRequest;
  }): Promise<KubeconfigResponse> {
    const shoot = await this.options.getShoot(input.project, input.name);
    const server = shoot.status.advertisedAddresses?.find((a) => a.name === 'external')?.url;
    if (server === undefined)
      throw new ConflictError(
        `shoot ${input.project}/${input.name} advertises no API address yet: its control plane has not served (a kubeconfig names the address it serves under)`,
        { code: 'NoAdvertisedAddress' },
      );
    const expirationSeconds = input.request.spec?.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
    const secrets = await this.options.secrets.open(commandShoot(shoot));
    const issued = await issueKubeconfig({
      project: input.project,
      name: input.name,
      server,
      secrets,
      role: input.role,
      user: input.user,
      expirationSeconds,
      now: this.options.clock.now(),
      ...(this.options.proxyUrl ? { proxyUrl: this.options.proxyUrl } : {}),
    });
    return {
      apiVersion: KUBECONFIG_API_VERSION,
      kind: input.role === 'admin' ? 'AdminKubeconfigRequest' : 'ViewerKubeconfigRequest',
      metadata: { project: input.project, name: input.name },
      spec: { expirationSeconds },
      status: {
        kubeconfig: Buffer.from(issued.kubeconfig).toString('base64'),
        expirationTimestamp: issued.expirationTimestamp,
      },
    };
  }
}
