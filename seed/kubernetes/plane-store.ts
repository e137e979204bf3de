import type { KubernetesObject } from '@kubernetes/client-node';
import { parsePlaneRecord, type PlaneRecord, type PlaneStore } from '../agent/plane-store.js';
import type { SeedNamespaces } from './namespaces.js';
import { FIELD_MANAGER, MANAGED_BY, SEED_LABEL } from './objects.js';

const NAME = 'gardenless-control-plane';
const KEY = 'state.json';
type ConfigMap = KubernetesObject & { data?: Record<string, string> };

/**
 * Each plane's record in a ConfigMap of its own namespace: the cluster keeps it, so that an agent in a
 * new pod finds its control planes again, and deleting the namespace deletes the record with it.
 */
export class ConfigMapPlaneStore implements PlaneStore {
  constructor(
    private readonly namespaces: SeedNamespaces,
    private readonly log?: (entry: Record<string, unknown>) => void,
  ) {}

  async save(record: PlaneRecord): Promise<void> {
    const namespace = await this.namespaces.ensure(record.shoot.technicalID);
    await this.namespaces.kube.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: NAME,
        namespace,
        labels: { [MANAGED_BY]: FIELD_MANAGER, [SEED_LABEL]: this.namespaces.seed },
      },
      data: { [KEY]: JSON.stringify(record) },
    } as ConfigMap);
  }

  // The record goes with the plane's namespace, which the hosting removes: the agent deletes no ConfigMap
  // (its ServiceAccount may not), and a plane it does not know yet keeps its record until it is adopted.
  async remove(_technicalID: string): Promise<void> {}

  async list(): Promise<PlaneRecord[]> {
    const maps = await this.namespaces.kube.list<ConfigMap>('v1', 'ConfigMap', {
      labelSelector: `${SEED_LABEL}=${this.namespaces.seed}`,
    });
    const records: PlaneRecord[] = [];
    for (const cm of maps) {
      const text = cm.data?.[KEY];
      const technicalID = technicalIDOf(cm, this.namespaces);
      if (cm.metadata?.name !== NAME || text === undefined || technicalID === undefined) continue;
      const parsed = parsePlaneRecord(text, technicalID);
      if ('record' in parsed) records.push(parsed.record);
      else this.log?.({ event: 'plane-record-unreadable', technicalID, error: parsed.error });
    }
    return records;
  }
}

/** The technical ID a namespace of this seed is named after. */
function technicalIDOf(cm: ConfigMap, namespaces: SeedNamespaces): string | undefined {
  const namespace = cm.metadata?.namespace;
  const prefix = namespaces.of('');
  return namespace?.startsWith(prefix) ? namespace.slice(prefix.length) : undefined;
}
