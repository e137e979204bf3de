// The test seed's load-balancer controller as a process of the cluster (local/kube/load-balancers.ts):
// it lives as long as the cluster, whichever process started it. Argument: the cluster's state file.
import { KubeCluster } from './cluster.js';
import { LoadBalancers } from './load-balancers.js';

const stateFile = process.argv[2];
if (!stateFile) {
  console.error('usage: load-balancers-main.ts <cluster state file>');
  process.exit(2);
}
const cluster = KubeCluster.attach(stateFile);
const port = cluster.info.node?.loadBalancerPort;
if (port === undefined) {
  console.error(`${stateFile} describes no real node with a load-balancer port`);
  process.exit(2);
}
const balancers = new LoadBalancers(cluster, port, (line) => console.log(`${new Date().toISOString()} ${line}`));
balancers.start();
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => void balancers.stop().finally(() => process.exit(0)));
