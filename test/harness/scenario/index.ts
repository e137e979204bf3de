export * from './tcp-proxy.js';
export * from './seed-proxies.js';
export * from './etcd-client.js';
export * from './writer.js';
export * from './checks.js';
export * from './process-tree.js';
export * from './cluster-writer.js';
