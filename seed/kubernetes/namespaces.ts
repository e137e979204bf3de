import type { V1Namespace } from '@kubernetes/client-node';
import { AgentCommandError } from '../agent/errors.js';
import type { KubeObjects } from './kube-api.js';
import { FIELD_MANAGER, MANAGED_BY, SEED_LABEL } from './objects.js';

/**
 * The namespace of each shoot's control plane on a Kubernetes seed (`[<prefix>]<technicalID>`), labelled
 * with the seed that owns it: one seed never writes into another's (several may share a test cluster).
 */
export class SeedNamespaces {
  constructor(
    readonly kube: KubeObjects,
    readonly seed: string,
    /** Only where several seeds share one cluster (tests, the local landscape); a real seed has none. */
    private readonly prefix = '',
  ) {}

  of(technicalID: string): string {
    return `${this.prefix}${technicalID}`;
  }

  /** The shoot's namespace, created if missing; refused while it is being deleted or when another seed's. */
  async ensure(technicalID: string): Promise<string> {
    const name = this.of(technicalID);
    const existing = await this.kube.read<V1Namespace>({ apiVersion: 'v1', kind: 'Namespace', name });
    if (existing?.metadata?.deletionTimestamp)
      throw new AgentCommandError(
        'RuntimeUnavailable',
        `namespace ${name} is still being deleted; retry when it is gone`,
      );
    const owner = existing?.metadata?.labels?.[SEED_LABEL];
    if (owner !== undefined && owner !== this.seed)
      throw new AgentCommandError('RuntimeUnavailable', `namespace ${name} belongs to seed ${owner}, not ${this.seed}`);
    if (existing !== undefined) return name;
    await this.kube.apply({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name,
        labels: {
          [MANAGED_BY]: FIELD_MANAGER,
          [SEED_LABEL]: this.seed,
          'gardener.cloud/shoot': technicalID,
          'gardener.cloud/role': 'shoot',
        },
      },
    });
    return name;
  }
}
