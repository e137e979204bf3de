import { CoreV1Api, type V1Service } from '@kubernetes/client-node';
import type { KubeCluster } from './cluster.js';
import { signalProcessGroup } from '../../seed/agent/process-group.js';
import { nodeForward } from './node-cluster.js';
import type { StartedProcess } from './processes.js';

/** How often Services are read. */
const POLL_MS = 500;

/**
 * The test seed's load balancers' addresses, one per Service: loopback addresses of their own (the local
 * seeds' load balancers are 127.0.0.x), so that each listens on the port every seed of a landscape serves
 * its shoots' API on. A shoot's kubeconfig names that port: it must hold on every seed it moves to.
 */
export const LOAD_BALANCER_ADDRESSES = Array.from({ length: 254 }, (_, i) => `127.0.2.${i + 1}`);

interface Balanced {
  /** The Service's cluster IP and port the forward reaches; a change makes a new forward. */
  target: string;
  address: string;
  processes: StartedProcess[];
}

/**
 * What a cloud's service controller does for the test seed with a real node: every Service of type
 * LoadBalancer gets an address of `LOAD_BALANCER_ADDRESSES` on the host, listening on the cluster's
 * load-balancer port and forwarded into the node's network namespace to the Service's cluster IP
 * (kube-proxy takes it from there to a Ready pod), and that address in its status (`ip`, and `ports`
 * since the port is not the Service's). A Service that goes loses its forward and its address. Only the
 * first port of a Service is balanced (kube-apiserver's has one).
 */
export class LoadBalancers {
  private readonly balanced = new Map<string, Balanced>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly core: CoreV1Api;

  constructor(
    private readonly cluster: KubeCluster,
    private readonly port: number,
    private readonly log: (line: string) => void = () => undefined,
  ) {
    this.core = cluster.kubeConfig().makeApiClient(CoreV1Api);
  }

  start(): void {
    const tick = () => {
      this.running = this.reconcile()
        .catch((error: unknown) => this.log(`load-balancers: ${String(error)}`))
        .finally(() => {
          if (this.timer !== undefined) this.timer = setTimeout(tick, POLL_MS);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    for (const key of [...this.balanced.keys()]) this.release(key);
  }

  /** One pass: a forward and a status for every LoadBalancer Service, none for the others. */
  async reconcile(): Promise<void> {
    const services = (await this.core.listServiceForAllNamespaces()).items.filter(
      (s) => s.spec?.type === 'LoadBalancer' && s.spec.clusterIP && s.spec.ports?.length,
    );
    const seen = new Set<string>();
    for (const service of services) {
      const key = `${service.metadata!.namespace}/${service.metadata!.name}`;
      seen.add(key);
      const target = `${service.spec!.clusterIP}:${service.spec!.ports![0]!.port}`;
      let entry = this.balanced.get(key);
      if (entry && entry.target !== target) {
        this.release(key);
        entry = undefined;
      }
      if (!entry) {
        const used = new Set([...this.balanced.values()].map((b) => b.address));
        const address = LOAD_BALANCER_ADDRESSES.find((a) => !used.has(a));
        if (address === undefined) throw new Error(`no load-balancer address left for ${key}`);
        const processes = await nodeForward(this.cluster, {
          name: `lb-${address}`,
          listen: { host: address, port: this.port },
          target: { host: service.spec!.clusterIP!, port: service.spec!.ports![0]!.port },
        });
        entry = { target, address, processes };
        this.balanced.set(key, entry);
        this.log(`load-balancers: ${key} at ${address}:${this.port} -> ${target}`);
      }
      if (!announces(service, entry.address, this.port)) await this.announce(service, entry.address);
    }
    for (const key of [...this.balanced.keys()]) if (!seen.has(key)) this.release(key);
  }

  private async announce(service: V1Service, address: string): Promise<void> {
    service.status = {
      ...service.status,
      loadBalancer: { ingress: [{ ip: address, ipMode: 'VIP', ports: [{ port: this.port, protocol: 'TCP' }] }] },
    };
    // A conflict (the Service changed since it was listed) is taken up at the next pass.
    await this.core
      .replaceNamespacedServiceStatus({
        name: service.metadata!.name!,
        namespace: service.metadata!.namespace!,
        body: service,
      })
      .catch((error: unknown) => {
        if ((error as { code?: number }).code !== 409 && (error as { code?: number }).code !== 404) throw error;
      });
  }

  private release(key: string): void {
    const entry = this.balanced.get(key);
    this.balanced.delete(key);
    for (const p of entry?.processes ?? []) if (p.child.pid) signalProcessGroup(p.child.pid, 'SIGTERM');
  }
}

function announces(service: V1Service, address: string, port: number): boolean {
  const ingress = service.status?.loadBalancer?.ingress;
  return ingress?.length === 1 && ingress[0]!.ip === address && ingress[0]!.ports?.[0]?.port === port;
}
