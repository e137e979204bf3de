import { Command } from 'commander';
import { ApiDomainProxy } from './api-proxy.js';
import { zoneRecords } from './api-proxy-zone.js';

/** The landscape's API-domain proxy as a process of its own (started detached by `npm start`, stopped by `npm run stop`). */
const options = new Command()
  .requiredOption('--port <port>', 'where it listens on 127.0.0.1', Number)
  .requiredOption('--aws-endpoint <url>', 'the emulator')
  .requiredOption('--region <region>')
  .requiredOption('--hosted-zone-id <id>', 'the zone of the external domain')
  .requiredOption('--domain <domain>', 'the external domain')
  .parse()
  .opts<{ port: number; awsEndpoint: string; region: string; hostedZoneId: string; domain: string }>();

const records = zoneRecords({
  endpoint: options.awsEndpoint,
  region: options.region,
  hostedZoneId: options.hostedZoneId,
});
const proxy = await ApiDomainProxy.start({
  domain: options.domain,
  port: options.port,
  lookup: (name) => records.get(name),
  log: (entry) => console.log(JSON.stringify(entry)),
});
console.log(JSON.stringify({ event: 'api-proxy-started', url: proxy.url, domain: options.domain }));
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.on(signal, () => void proxy.stop().then(() => process.exit(0)));
