import type { AwsCredentialIdentity } from '@smithy/types';
import { GardenClient } from '../adapters/http/garden-client.js';
import { readEndpoints } from '../local/landscape-file.js';

export interface CliOptions {
  apiUrl?: string;
  region?: string;
  output: 'table' | 'json';
}

/**
 * Where the CLI talks to: flags, then GARDENLESS_API_URL, then the local landscape's endpoints file.
 * Against the local landscape the emulator's test credentials are used unless AWS credentials are set.
 */
export function clientFor(options: CliOptions): GardenClient {
  const local = readEndpoints();
  const apiUrl = options.apiUrl ?? process.env.GARDENLESS_API_URL ?? local?.apiUrl;
  if (!apiUrl) {
    throw new Error('No API URL: pass --api-url, set GARDENLESS_API_URL, or start the local landscape with npm start');
  }
  const region = options.region ?? process.env.AWS_REGION ?? local?.region ?? 'us-east-1';
  const usingLocal = local !== undefined && apiUrl === local.apiUrl;
  const testCredentials: AwsCredentialIdentity = { accessKeyId: 'test', secretAccessKey: 'test' };
  const credentials = usingLocal && !process.env.AWS_ACCESS_KEY_ID ? async () => testCredentials : undefined;
  return new GardenClient({ apiUrl, region, ...(credentials ? { credentials } : {}) });
}
