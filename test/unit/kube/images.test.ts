import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../local/emulator.js';
import { dockerfileRecipe, testImageVector } from '../../../local/kube/images.js';
import { imageVector } from '../../../seed/kubernetes/image-vector.js';
import { MEDIA_TYPES, writeImageLayout } from '../../../local/kube/oci.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the test seed's images", () => {
  it("follow deploy/Dockerfile's base image and packages (read from the Dockerfile itself)", () => {
    const dockerfile = readFileSync(join(PROJECT_ROOT, 'deploy', 'Dockerfile'), 'utf8');
    expect(dockerfileRecipe(dockerfile)).toEqual({
      nodeVersion: '20.19.5',
      suite: 'bookworm',
      packages: ['etcd-server', 'etcd-client', 'ca-certificates'],
    });
  });

  it('refuse a Dockerfile whose base or install line they cannot follow', () => {
    expect(() => dockerfileRecipe('FROM debian:bookworm\nRUN apt-get install -y etcd-server\n')).toThrow(
      /deploy\/Dockerfile no longer has/,
    );
  });

  it('are OCI layouts: blobs named by their digests, the config naming the layers it was built from', async () => {
    // Prepare: two layer tars (their content does not matter to the layout).
    const dir = mkdtempSync(join(tmpdir(), 'gl-oci-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'a.tar'), 'first layer');
    writeFileSync(join(dir, 'b.tar'), 'second layer');
    const sha = (bytes: Buffer | string) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    // Act
    await writeImageLayout(join(dir, 'layout'), {
      ref: 'localhost/gardenless/example:1.0',
      layers: [join(dir, 'a.tar'), join(dir, 'b.tar')],
      run: { env: { PATH: '/bin' }, entrypoint: ['x'], user: '65532:65532' },
    });
    // Assess: every descriptor points at a blob with that digest and size.
    const layout = join(dir, 'layout');
    const blob = (digest: string) => readFileSync(join(layout, 'blobs', 'sha256', digest.slice('sha256:'.length)));
    expect(JSON.parse(readFileSync(join(layout, 'oci-layout'), 'utf8'))).toEqual({ imageLayoutVersion: '1.0.0' });
    const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8'));
    expect(index.manifests).toHaveLength(1);
    expect(index.manifests[0].annotations).toEqual({
      'io.containerd.image.name': 'localhost/gardenless/example:1.0',
      'org.opencontainers.image.ref.name': '1.0',
    });
    const manifestBytes = blob(index.manifests[0].digest);
    expect(sha(manifestBytes)).toBe(index.manifests[0].digest);
    expect(manifestBytes.length).toBe(index.manifests[0].size);
    const manifest = JSON.parse(manifestBytes.toString());
    expect(manifest.mediaType).toBe(MEDIA_TYPES.manifest);
    expect(manifest.layers.map((l: { digest: string }) => l.digest)).toEqual([sha('first layer'), sha('second layer')]);
    for (const l of manifest.layers)
      expect(statSync(join(layout, 'blobs', 'sha256', l.digest.slice(7))).size).toBe(l.size);
    const config = JSON.parse(blob(manifest.config.digest).toString());
    expect(sha(blob(manifest.config.digest))).toBe(manifest.config.digest);
    // Uncompressed layers: their digests are the diff ids.
    expect(config.rootfs).toEqual({ type: 'layers', diff_ids: [sha('first layer'), sha('second layer')] });
    expect(config.config).toEqual({ Env: ['PATH=/bin'], Entrypoint: ['x'], User: '65532:65532' });
  });

  it('are what the image vector names: the sidecar is the gardenless image, the kube components their own', () => {
    const vector = imageVector(
      testImageVector({
        gardenless: { name: 'gardenless', ref: 'localhost/gardenless/gardenless:0.1.0-abc', layout: '/l' },
        'kube-apiserver': { name: 'kube-apiserver', ref: 'localhost/gardenless/kube-apiserver:v1.30.14', layout: '/k' },
        pause: { name: 'pause', ref: 'localhost/gardenless/pause:1', layout: '/p' },
      }),
    );
    expect(vector['etcd-backup-restore']).toBe('localhost/gardenless/gardenless:0.1.0-abc');
    expect(vector['kube-apiserver']).toBe('localhost/gardenless/kube-apiserver:v1.30.14');
    // What the test seed does not build keeps its default.
    expect(vector['cluster-autoscaler']).toBe('registry.k8s.io/autoscaling/cluster-autoscaler:v1.30.4');
  });
});
