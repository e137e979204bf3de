import { Route53Client } from '@aws-sdk/client-route-53';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { s3Api } from '../../adapters/s3/s3-api.js';
import { S3SnapshotStore } from '../../adapters/s3/snapshot-store.js';
import { ownerRecordName } from '../../core/ownership/index.js';
import { contractSecrets, seedRuntimeContract } from '../contract/seed-runtime.contract.js';
import { testGarden } from '../harness/garden.js';
import { localRuntimeOnEmulator } from '../harness/local-runtime.js';
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
    const identity = `${seed}-${Date.now().toString(36)}`;
    const workDir = mkdtempSync(join(tmpdir(), 'gl-contract-local-'));
    const secrets = contractSecrets(seed);
    const recordOf = (shoot: { name: string; project: string }) =>
      ownerRecordName({ shoot: shoot.name, project: shoot.project, internalDomain });
    const snapshots = new S3SnapshotStore({ bucket, api });
    const { runtime } = localRuntimeOnEmulator({
      deployment,
      seed,
      identity,
      workDir,
      s3,
      owners,
      openSecrets: secrets.openSecrets,
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
