import { EtcdRequestError, type EtcdGet, type EtcdPut } from '../../../harness/scenario/etcd-client.js';
import type { SeedRole } from '../../../harness/scenario/writer.js';

/** Two fake etcds whose availability the test switches; `shared` makes them one store (no split brain). */
export function fakeStores(options: { shared?: boolean } = {}) {
  const up: Record<SeedRole, boolean> = { source: true, destination: false };
  const source = new Map<string, string>();
  const stores: Record<SeedRole, Map<string, string>> = { source, destination: options.shared ? source : new Map() };
  const refuse = (seed: SeedRole) => {
    if (!up[seed]) throw new EtcdRequestError(`${seed} refused`, { outcome: 'fail' });
  };
  const put: EtcdPut = async ({ endpoint, key, value }) => {
    await Promise.resolve();
    refuse(endpoint as SeedRole);
    stores[endpoint as SeedRole].set(key, value);
    return { revision: 1 };
  };
  const get: EtcdGet = async ({ endpoint, key }) => {
    await Promise.resolve();
    refuse(endpoint as SeedRole);
    return { value: stores[endpoint as SeedRole].get(key), revision: 1 };
  };
  return { up, stores, put, get };
}
