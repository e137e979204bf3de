import { Route53Client } from '@aws-sdk/client-route-53';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Route53OwnerLookup } from '../../adapters/route53/owner-lookup.js';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { S3BlobStore } from '../../adapters/s3/blob-store.js';
import { s3Api } from '../../adapters/s3/s3-api.js';
import { S3SnapshotStore } from '../../adapters/s3/snapshot-store.js';
import { lookUpOwner, ownerRecordName } from '../../core/ownership/index.js';
import { ControlPlaneRuntime } from '../../seed/agent/control-plane-runtime.js';
import { LocalHosting } from '../../seed/agent/local-hosting.js';
import { contractSecrets, seedRuntimeContract } from '../contract/seed-runtime.contract.js';
import { FAKE_KUBE_BIN_DIR } from '../../harness/kube/binaries.js';
import { testGarden } from '../harness/garden.js';
import { TEST_OWNERSHIP_TIMINGS } from '../../harness/timings.js';
import { emulatorCredentialsEnv } from '../../local/aws-env.js';
import { until } from '../../harness/until.js';

// The local runtime: one real etcd per shoot under its real backup-restore sidecar, which snapshots into
// the emulator's S3 and reads the owner record from its Route 53.
seedRuntimeContract('local (real etcd and sidecars, the emulator)', {
  project: 'lcontract',
  fixture: async () => {
    const { deployment } = testGarden();
    const { aws } = testGarden();
    const s3 = new S3Client({ ...aws, forcePathStyle: true });
    const api = s3Api(s3);
    const seed = 'local-contract';
    const bucket = `gl-backup-${seed}`;
    const stateBucket = 'gl-contract-state';
    for (const name of [bucket, stateBucket])
      await s3.send(new CreateBucketCommand({ Bucket: name })).catch(() => undefined);
    const internalDomain = deployment.outputs.InternalDomain;
    const owners = new Route53OwnerRecords({
      hostedZoneId: deployment.outputs.HostedZoneId,
      api: route53Api(new Route53Client(aws)),
    });
    const lookup = new Route53OwnerLookup(owners);
    const identity = `${seed}-${Date.now().toString(36)}`;
    const workDir = mkdtempSync(join(tmpdir(), 'gl-contract-local-'));
    const hosting = new LocalHosting({
      identity,
      workDir,
      aws: { endpoint: deployment.awsEndpoint, region: deployment.region },
      owner: { mode: 'api', hostedZoneId: deployment.outputs.HostedZoneId, internalDomain },
      sidecar: { ownership: TEST_OWNERSHIP_TIMINGS, deltaSnapshotInterval: 1_000 },
      env: { ...process.env, ...emulatorCredentialsEnv(deployment.region) },
      // The contract is about the runtime's answers and reports: the processes it runs, not Kubernetes.
      kubeBinDir: FAKE_KUBE_BIN_DIR,
    });
    const secrets = contractSecrets(seed);
    const recordOf = (shoot: { name: string; project: string }) =>
      ownerRecordName({ shoot: shoot.name, project: shoot.project, internalDomain });
    const snapshots = new S3SnapshotStore({ bucket, api });
    const runtime = new ControlPlaneRuntime({
      seed,
      hosting,
      blobStore: (b) => new S3BlobStore({ bucket: b, api }),
      snapshotStore: (b) => new S3SnapshotStore({ bucket: b, api }),
      openSecrets: secrets.openSecrets,
      ownerCheck: async (shoot) => (await lookUpOwner(lookup, { name: recordOf(shoot), identity })).result,
    });
    return {
      runtime,
      seed,
      bucket,
      stateBucket,
      seal: secrets.seal,
      setOwner: async (shoot, yes) =>
        void (await owners.set({ name: recordOf(shoot), value: yes ? identity : 'another-seed-0000' })),
      backups: async (shoot) => {
        // The sidecar takes a full snapshot when it starts; wait for it in the bucket.
        const fulls = await until(
          `a full snapshot of ${shoot.technicalID} in ${bucket}`,
          async () => {
            const fulls = (await snapshots.list(shoot.technicalID)).filter((s) => s.kind === 'Full');
            return fulls.length > 0 && fulls;
          },
          { timeoutMs: 30_000, intervalMs: 250 },
        );
        return Math.max(...fulls.map((s) => s.lastRevision));
      },
      settleMs: 30_000,
      diagnostics: () =>
        readdirSync(workDir)
          .flatMap((id) =>
            readdirSync(join(workDir, id))
              .filter((f) => f.endsWith('.log'))
              .map(
                (f) =>
                  `--- ${id}/${f} ---\n${readFileSync(join(workDir, id, f), 'utf8')
                    .split('\n')
                    .slice(-15)
                    .join('\n')}`,
              ),
          )
          .join('\n'),
      close: async () => {
        await runtime.stop();
        rmSync(workDir, { recursive: true, force: true });
      },
    };
  },
});
