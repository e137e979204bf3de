/** The environment every AWS client and the CDK CLI get when they talk to the emulator. */
export const LOCAL_ACCOUNT = '000000000000';
export const LOCAL_REGION = 'us-east-1';

export function emulatorEnv(endpoint: string, region = LOCAL_REGION): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: endpoint,
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    CDK_DEFAULT_ACCOUNT: LOCAL_ACCOUNT,
    CDK_DEFAULT_REGION: region,
    // The SDK's Node 20 deprecation notice is printed once per process; it is known and tracked in the README.
    AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: '1',
    // Its eight-line warning that releases after January 2027 need Node 22 (the README's known limits).
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
}
