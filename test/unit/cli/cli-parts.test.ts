import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { apiErrorLine, rootCause, unreachable } from '../../../cli/api.js';
import { kindOf, mergeServerOwned, pathOf } from '../../../cli/apply.js';
import { confirm } from '../../../cli/confirm.js';
import { controlPlaneList, type ControlPlaneLayout } from '../../../cli/controlplane.js';
import { ManifestError, readManifests } from '../../../cli/manifests.js';
import { formatResources, resourceName, serialize } from '../../../cli/output.js';
import { buildProgram, commandWord } from '../../../cli/program.js';
import { completionScript } from '../../../cli/completion.js';
import { seedName, splitShoot } from '../../../cli/refs.js';
import { controlPlaneLayout, layoutObjects } from '../../../core/ha/layout.js';
import { imageVector } from '../../../seed/kubernetes/image-vector.js';
import type { Seed } from '../../../core/model/seed.js';
import type { Shoot } from '../../../core/model/shoot.js';

describe('readManifests', () => {
  const dir = mkdtempSync(join(tmpdir(), 'manifests-'));
  writeFileSync(
    join(dir, 'a.yaml'),
    'kind: Seed\nmetadata: { name: a }\n---\n# only a comment\n---\nkind: Shoot\nmetadata: { project: p, name: s }\n',
  );
  writeFileSync(
    join(dir, 'b.json'),
    JSON.stringify({
      kind: 'SeedList',
      items: [
        { kind: 'Seed', metadata: { name: 'b1' } },
        { kind: 'Seed', metadata: { name: 'b2' } },
      ],
    }),
  );
  writeFileSync(join(dir, 'notes.txt'), 'not a manifest');
  mkdirSync(join(dir, 'bad'));
  writeFileSync(join(dir, 'bad', 'x.yaml'), 'kind: [unclosed');
  writeFileSync(join(dir, 'bad', 'list.yaml'), '- 1\n- 2\n');

  it('reads YAML documents and JSON lists of a directory in name order, skipping empty documents and other files', async () => {
    const ms = await readManifests([dir]);
    expect(ms.map((m) => [m.source.replace(dir, ''), (m.object.metadata as { name: string }).name])).toEqual([
      ['/a.yaml#1', 'a'],
      ['/a.yaml#3', 's'],
      ['/b.json items[0]', 'b1'],
      ['/b.json items[1]', 'b2'],
    ]);
  });

  it('reads stdin for -', async () => {
    const ms = await readManifests(['-'], () => '{"kind":"Seed","metadata":{"name":"x"}}');
    expect(ms).toEqual([{ source: '<stdin>', object: { kind: 'Seed', metadata: { name: 'x' } } }]);
  });

  it.each([
    [['bad/x.yaml'], /not YAML or JSON/],
    [['bad/list.yaml'], /a manifest is an object/],
    [['missing.yaml'], /does not exist/],
  ])('refuses %s', async (paths, message) => {
    await expect(readManifests(paths.map((p) => join(dir, p)))).rejects.toThrow(message);
    await expect(readManifests(paths.map((p) => join(dir, p)))).rejects.toBeInstanceOf(ManifestError);
  });
});

describe('apply', () => {
  const shoot = (seedName?: string) => ({
    kind: 'Shoot',
    metadata: { project: 'dev', name: 'web' },
    spec: { region: 'eu-west-1', ...(seedName ? { seedName } : {}) },
  });

  it('keeps the placement the server set when the manifest leaves it out', () => {
    expect(mergeServerOwned('Shoot', shoot(), shoot('aws-eu1'))).toEqual(shoot('aws-eu1'));
  });
  it('sends a placement the manifest states, and leaves an unscheduled shoot unscheduled', () => {
    expect(mergeServerOwned('Shoot', shoot('aws-eu2'), shoot('aws-eu1'))).toEqual(shoot('aws-eu2'));
    expect(mergeServerOwned('Shoot', shoot(), shoot())).toEqual(shoot());
  });
  it('leaves seeds as written', () => {
    const seed = { kind: 'Seed', metadata: { name: 'a' }, spec: {} };
    expect(mergeServerOwned('Seed', seed, { ...seed, spec: { x: 1 } })).toBe(seed);
  });
  it("finds kind and path, with the command's kind as the default", () => {
    expect(kindOf({ source: 'f', object: { metadata: {} } }, 'Seed')).toBe('Seed');
    expect(() => kindOf({ source: 'f', object: { kind: 'Pod' } }, 'Seed')).toThrow(/"Pod" is not Seed or Shoot/);
    expect(() => kindOf({ source: 'f', object: {} })).toThrow(/kind is missing/);
    expect(pathOf('Shoot', shoot(), 'f')).toBe('/projects/dev/shoots/web');
    expect(pathOf('Seed', { metadata: { name: 'a' } }, 'f')).toBe('/seeds/a');
    expect(() => pathOf('Shoot', { metadata: { name: 'web' } }, 'f')).toThrow(/metadata.project/);
    expect(() => pathOf('Seed', {}, 'f')).toThrow(/metadata.name is missing/);
  });
});

describe('references and names', () => {
  it('accepts what -o name prints', () => {
    expect(splitShoot('shoot/dev/web')).toEqual(['dev', 'web']);
    expect(splitShoot('dev/web')).toEqual(['dev', 'web']);
    expect(seedName('seed/aws-eu1')).toBe('aws-eu1');
    expect(() => splitShoot('web')).toThrow(/not <project>\/<name>/);
    expect(() => seedName('a/b')).toThrow(/not a seed name/);
    expect(resourceName({ kind: 'Shoot', metadata: { project: 'dev', name: 'web' } })).toBe('shoot/dev/web');
    expect(resourceName({ kind: 'Seed', metadata: { name: 'a' } })).toBe('seed/a');
  });
  it('finds the command word past global options and their values', () => {
    expect(commandWord(['-o', 'json', '--api-url', 'http://x', 'seed-agent', '--seed', 'a'])).toBe('seed-agent');
    expect(commandWord(['--help'])).toBeUndefined();
  });
});

describe('output formats', () => {
  const items = [
    { kind: 'Seed', metadata: { name: 'a' } },
    { kind: 'Seed', metadata: { name: 'b' } },
  ];
  const table = (xs: typeof items, wide: boolean) => `${wide ? 'WIDE' : 'TABLE'} ${xs.length}`;
  it.each([
    ['table', false, 'TABLE 2'],
    ['wide', false, 'WIDE 2'],
    ['name', false, 'seed/a\nseed/b'],
    ['json', true, JSON.stringify(items[0], null, 2)],
    [
      'yaml',
      false,
      'apiVersion: v1\nkind: List\nitems:\n  - kind: Seed\n    metadata:\n      name: a\n  - kind: Seed\n    metadata:\n      name: b\nmetadata:\n  resourceVersion: ""',
    ],
  ] as const)('%s (single %s)', async (format, single, text) => {
    expect(await formatResources(items, { format, single, table })).toBe(text);
  });
  it('serializes JSON as kubectl does', async () => {
    expect(await serialize({ a: [1] }, 'json')).toBe('{\n  "a": [\n    1\n  ]\n}');
  });
});

describe('confirm', () => {
  const ask = async (answer: string | undefined, yes = false) => {
    const input = new PassThrough();
    const output = new PassThrough();
    let asked = '';
    output.on('data', (d: Buffer) => (asked += d.toString()));
    const result = confirm('Delete?', { yes, input, output });
    if (answer === undefined) input.end();
    else input.end(answer);
    return { result: await result, asked };
  };
  it.each([
    ['y\n', true],
    ['yes\n', true],
    ['Y\n', true],
    ['n\n', false],
    ['\n', false],
    ['yesss\n', false],
    [undefined, false],
  ])('answer %j: %s', async (answer, expected) => {
    const { result, asked } = await ask(answer);
    expect(result).toBe(expected);
    expect(asked).toMatch(/^Delete\? \[y\/N\] /);
  });
  it('asks nothing with --yes', async () => {
    expect(await ask(undefined, true)).toEqual({ result: true, asked: '' });
  });
});

describe('errors without an answer', () => {
  const url = new URL('https://api.example.com/prod');
  it('name the host and the innermost cause', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' });
    const error = unreachable(new TypeError('fetch failed', { cause: refused }), url);
    expect(error.message).toBe('cannot reach the garden API at api.example.com: connect ECONNREFUSED 10.0.0.1:443');
    expect(error.name).toBe('ApiUnreachableError');
  });
  it('say that credentials are missing, and where to set them', () => {
    const error = unreachable(
      Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' }),
      url,
    );
    expect(error.message).toMatch(
      /^no AWS credentials to sign requests to api.example.com \(Could not load credentials from any providers\): set AWS_PROFILE/,
    );
  });
  it('say when the API did not answer in time', () => {
    const error = unreachable(
      Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' }),
      url,
    );
    expect(error.message).toBe(
      'the garden API at api.example.com did not answer in time (The operation was aborted due to timeout)',
    );
  });
  it('add a code the message does not carry, and join the causes of an AggregateError', () => {
    expect(rootCause(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).toBe(
      'ECONNRESET: socket hang up',
    );
    expect(rootCause(new AggregateError([new Error('a'), new Error('b')]))).toBe('a; b');
  });
  it('format an API error as one line', () => {
    expect(apiErrorLine(422, { code: 'FieldImmutable', message: 'no', field: 'spec.region' })).toBe(
      'error 422 FieldImmutable: no (field spec.region)',
    );
  });
});

describe('controlPlaneList', () => {
  it('is a v1 List: the namespace, then every workload with a container of its image, then the PDBs', () => {
    const seed = {
      metadata: { name: 'a' },
      spec: { provider: { type: 'aws', region: 'eu-west-1', zones: ['z1', 'z2', 'z3'] } },
    } as unknown as Seed;
    const shoot = {
      metadata: { project: 'dev', name: 'web' },
      spec: { controlPlane: { highAvailability: { failureTolerance: { type: 'zone' } } } },
      status: { technicalID: 'shoot--dev--web' },
    } as unknown as Shoot;
    const layout = controlPlaneLayout({ shoot, seed });
    const answer: ControlPlaneLayout = {
      kind: 'ControlPlaneLayout',
      technicalID: layout.technicalID,
      seedName: 'a',
      failureTolerance: 'zone',
      zones: layout.zones,
      zonePinned: false,
      items: layoutObjects(layout),
    };
    const images = imageVector();

    const list = controlPlaneList(answer, images);

    expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List' });
    expect(list.items[0]).toEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'shoot--dev--web', labels: { 'gardener.cloud/shoot': 'shoot--dev--web' } },
    });
    const workloads = list.items.filter((o) =>
      ['Deployment', 'StatefulSet'].includes((o as { kind: string }).kind),
    ) as { metadata: { name: string }; spec: { template: { spec: { containers: unknown[] } } } }[];
    expect(workloads.map((w) => [w.metadata.name, w.spec.template.spec.containers])).toEqual([
      ['etcd', [{ name: 'etcd', image: images['etcd-backup-restore'] }]],
      ['kube-apiserver', [{ name: 'kube-apiserver', image: images['kube-apiserver'] }]],
      [
        'gardener-resource-manager',
        [{ name: 'gardener-resource-manager', image: images['gardener-resource-manager'] }],
      ],
      ['kube-controller-manager', [{ name: 'kube-controller-manager', image: images['kube-controller-manager'] }]],
      ['kube-scheduler', [{ name: 'kube-scheduler', image: images['kube-scheduler'] }]],
      [
        'machine-controller-manager',
        [{ name: 'machine-controller-manager', image: images['machine-controller-manager'] }],
      ],
      ['cluster-autoscaler', [{ name: 'cluster-autoscaler', image: images['cluster-autoscaler'] }]],
    ]);
    expect(list.items.filter((o) => (o as { kind: string }).kind === 'PodDisruptionBudget')).toHaveLength(7);
    // The answer itself is left as it was.
    expect(
      (answer.items[0] as { spec: { template: { spec: { containers?: unknown } } } }).spec.template.spec.containers,
    ).toBeUndefined();
  });
});

describe('completion', () => {
  const program = buildProgram();
  it('offers the subcommands and options of the word typed so far (bash)', () => {
    const script = completionScript(program, 'bash');
    expect(script).toMatch(
      /"shoot"\) words="list get apply delete controlplane migrate migration members kubeconfig --help" ;;/,
    );
    expect(script).toMatch(
      /"shoot list"\) words="-A --all-projects --help" ;;|"shoot list"\) words="--all-projects -A --help" ;;/,
    );
    expect(script).toMatch(/compgen -W "table wide json yaml name"/);
  });
  it('writes fish completions per subcommand', () => {
    expect(completionScript(program, 'fish')).toMatch(
      /complete -c gardenless -n "__fish_seen_subcommand_from migrate" -l dry-run/,
    );
  });
});
