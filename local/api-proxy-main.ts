import { Route53Client } from '@aws-sdk/client-route-53';
import { Command } from 'commander';
import { Route53ApiRecords } from '../adapters/route53/api-records.js';
import { route53Api } from '../adapters/route53/route53-api.js';
import { ApiDomainProxy } from './api-proxy.js';
import { emulatorCredentials } from './aws-env.js';

/** The landscape's API-domain proxy as a process of its own (started detached by `npm start`, stopped by `npm run stop`). */
const options = new Command()
  .requiredOption('--port <port>', 'where it listens on 127.0.0.1', Number)
  .requiredOption('--aws-endpoint <url>', 'the emulator')
  .requiredOption('--region <region>')
  .requiredOption('--hosted-zone-id <id>', 'the zone of the external domain')
  .requiredOption('--domain <domain>', 'the external domain')
  .parse()
  .opts<{ port: number; awsEndpoint: string; region: string; hostedZoneId: string; domain: string }>();

const records = new Route53ApiRecords({
  hostedZoneId: options.hostedZoneId,
  api: route53Api(
    new Route53Client({ endpoint: options.awsEndpoint, region: options.region, credentials: emulatorCredentials() }),
  ),
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
