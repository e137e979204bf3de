import type { S3Client } from '@aws-sdk/client-s3';
import { Route53OwnerLookup } from '../../adapters/route53/owner-lookup.js';
import type { Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { S3BlobStore } from '../../adapters/s3/blob-store.js';
import { s3Api } from '../../adapters/s3/s3-api.js';
import { S3SnapshotStore } from '../../adapters/s3/snapshot-store.js';
import { lookUpOwner, ownerRecordName } from '../../core/ownership/index.js';
import type { ShootSecrets, SealedSecrets } from '../../core/shootstate/index.js';
import type { SeedCommand } from '../../core/commands/index.js';
import { FAKE_KUBE_BIN_DIR } from '../../harness/kube/binaries.js';
import { TEST_OWNERSHIP_TIMINGS } from '../../harness/timings.js';
import { emulatorCredentialsEnv } from '../../local/aws-env.js';
import type { Deployment } from '../../local/deploy.js';
import { ControlPlaneRuntime } from '../../seed/agent/control-plane-runtime.js';
import { LocalHosting } from '../../seed/agent/local-hosting.js';

/**
 * The local runtime as the integration tests drive it without an agent: real sidecars and etcd under a
 * `LocalHosting` on the emulator (owner records through the Route 53 API, a delta snapshot a second, the
 * test ownership timings), a stand-in kube-apiserver (the tests are about the runtime's answers and
 * processes, not Kubernetes), and the runtime's own owner check of the seed `identity`.
 */
export function localRuntimeOnEmulator(input: {
  deployment: Pick<Deployment, 'awsEndpoint' | 'region'> & {
    outputs: Pick<Deployment['outputs'], 'HostedZoneId' | 'InternalDomain'>;
  };
  seed: string;
  identity: string;
  workDir: string;
  s3: S3Client;
  owners: Route53OwnerRecords;
  openSecrets: (sealed: SealedSecrets, shoot: SeedCommand['shoot']) => Promise<ShootSecrets>;
}): { hosting: LocalHosting; runtime: ControlPlaneRuntime } {
  const { deployment, identity } = input;
  const internalDomain = deployment.outputs.InternalDomain;
  const hosting = new LocalHosting({
    identity,
    workDir: input.workDir,
    aws: { endpoint: deployment.awsEndpoint, region: deployment.region },
    owner: { mode: 'api', hostedZoneId: deployment.outputs.HostedZoneId, internalDomain },
    sidecar: { ownership: TEST_OWNERSHIP_TIMINGS, deltaSnapshotInterval: 1_000 },
    env: { ...process.env, ...emulatorCredentialsEnv(deployment.region) },
    kubeBinDir: FAKE_KUBE_BIN_DIR,
  });
  const api = s3Api(input.s3);
  const lookup = new Route53OwnerLookup(input.owners);
  const runtime = new ControlPlaneRuntime({
    seed: input.seed,
    hosting,
    blobStore: (b) => new S3BlobStore({ bucket: b, api }),
    snapshotStore: (b) => new S3SnapshotStore({ bucket: b, api }),
    openSecrets: input.openSecrets,
    ownerCheck: async (shoot) =>
      (
        await lookUpOwner(lookup, {
          name: ownerRecordName({ shoot: shoot.name, project: shoot.project, internalDomain }),
          identity,
        })
      ).result,
  });
  return { hosting, runtime };
}
