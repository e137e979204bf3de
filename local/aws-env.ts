import type { AwsCredentialIdentity } from '@smithy/types';

/**
 * What talks to the emulator uses: its account, region, credentials and environment. No SDK here: the CLI
 * reads the credentials at every call.
 */
export const LOCAL_ACCOUNT = '000000000000';
export const LOCAL_REGION = 'us-east-1';

/**
 * The emulator accepts any key: everything local (the landscape, tests, benchmarks) signs with this one. A
 * new object at each call: the SDK marks the credentials a client is given, so clients do not share one.
 */
export function emulatorCredentials(): AwsCredentialIdentity {
  return { accessKeyId: 'test', secretAccessKey: 'test' };
}

/** The credentials as a child process's environment (an agent's sidecars, a CLI call). */
export function emulatorCredentialsEnv(region = LOCAL_REGION): Record<string, string> {
  return {
    AWS_ACCESS_KEY_ID: emulatorCredentials().accessKeyId,
    AWS_SECRET_ACCESS_KEY: emulatorCredentials().secretAccessKey,
    AWS_REGION: region,
  };
}

export function emulatorEnv(endpoint: string, region = LOCAL_REGION): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: endpoint,
    ...emulatorCredentialsEnv(region),
    AWS_DEFAULT_REGION: region,
    CDK_DEFAULT_ACCOUNT: LOCAL_ACCOUNT,
    CDK_DEFAULT_REGION: region,
    // The SDK's Node 20 deprecation notice is printed once per process; it is known and tracked in the README.
    AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: '1',
    // Its eight-line warning that releases after January 2027 need Node 22 (the README's known limits).
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
}
