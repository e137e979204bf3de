import type { AwsCredentialIdentity } from '@smithy/types';
import type { GardenClient } from '../adapters/http/garden-client.js';
import { emulatorCredentials } from '../local/aws-env.js';
import { readEndpoints } from '../local/landscape-file.js';

export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml', 'name'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface CliOptions {
  apiUrl?: string;
  region?: string;
  output: OutputFormat;
}

/** Where the CLI talks to, and how it signs: flags, then the environment, then the local landscape. */
export interface Target {
  apiUrl: string;
  region: string;
  /** The emulator's test credentials, used against the local landscape unless AWS credentials are set. */
  credentials?: AwsCredentialIdentity;
}

/**
 * Where the CLI talks to: flags, then GARDENLESS_API_URL, then the local landscape's endpoints file.
 * Against the local landscape the emulator's test credentials are used unless AWS credentials are set.
 */
export function targetFor(options: Pick<CliOptions, 'apiUrl' | 'region'>): Target {
  const local = readEndpoints();
  // An empty variable counts as unset, as in a shell.
  const apiUrl = options.apiUrl || process.env.GARDENLESS_API_URL || local?.apiUrl;
  if (!apiUrl) {
    throw new Error('No API URL: pass --api-url, set GARDENLESS_API_URL, or start the local landscape with npm start');
  }
  const region = options.region ?? process.env.AWS_REGION ?? local?.region ?? 'us-east-1';
  const usingLocal = local !== undefined && apiUrl === local.apiUrl;
  const {
    AWS_ACCESS_KEY_ID: accessKeyId,
    AWS_SECRET_ACCESS_KEY: secretAccessKey,
    AWS_SESSION_TOKEN: sessionToken,
  } = process.env;
  // Keys in the environment come first in the SDK's chain too; taking them here spares loading the chain
  // (about 0.7 s of module loading on this machine) for every call.
  const credentials =
    accessKeyId && secretAccessKey
      ? { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) }
      : usingLocal && !process.env.AWS_PROFILE
        ? emulatorCredentials()
        : undefined;
  return { apiUrl, region, ...(credentials ? { credentials } : {}) };
}

/** The signing API client for `options` (loaded on first use, so that `--help` does not load the SDK). */
export async function clientFor(options: Pick<CliOptions, 'apiUrl' | 'region'>): Promise<GardenClient> {
  const { GardenClient } = await import('../adapters/http/garden-client.js');
  const target = targetFor(options);
  const credentials = target.credentials;
  return new GardenClient({
    apiUrl: target.apiUrl,
    region: target.region,
    ...(credentials ? { credentials: async () => credentials } : {}),
  });
}
