import { Command, Option } from 'commander';
import { readFileSync } from 'node:fs';
import type { GardenResponse } from '../adapters/http/garden-client.js';
import type { Seed } from '../core/model/seed.js';
import type { Shoot } from '../core/model/shoot.js';
import { clientFor, type CliOptions } from './config.js';
import { registerBackupRestoreCommand } from './backup-restore-command.js';
import { registerMembersCommand } from './members-command.js';
import { registerMigrateCommands } from './migrate-command.js';
import { registerSeedAgentCommand } from './seed-agent-command.js';
import { seedRows, shootRows } from './render.js';

const program = new Command('gardenless')
  .description('Operate a gardenless garden: seeds, shoots and control-plane migrations')
  .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'json']).default('table'))
  .option('--api-url <url>', 'garden API URL (default: GARDENLESS_API_URL or the local landscape)')
  .option('--region <region>', 'AWS region for SigV4 signing');

const opts = (): CliOptions => program.opts<CliOptions>();

/** Prints a response; a non-2xx answer is an error exit with the API's JSON error. */
function print<T>(res: GardenResponse<T>, render: (body: T) => string): void {
  if (res.status >= 300) {
    const err = res.body as { code?: string; message?: string; field?: string };
    if (opts().output === 'json') console.error(JSON.stringify(res.body, null, 2));
    else console.error(`error ${res.status} ${err.code ?? ''}: ${err.message ?? String(res.body)}${err.field ? ` (field ${err.field})` : ''}`);
    process.exitCode = 1;
    return;
  }
  console.log(opts().output === 'json' ? JSON.stringify(res.body, null, 2) : render(res.body));
}

function readJson(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file === '-' ? 0 : file, 'utf8')) as Record<string, unknown>;
}

function splitShoot(ref: string): [string, string] {
  const [project, name, ...rest] = ref.split('/');
  if (!project || !name || rest.length > 0) throw new Error(`"${ref}" is not <project>/<name>`);
  return [project, name];
}

async function listAll<T>(path: string): Promise<GardenResponse<{ items: T[] }>> {
  const client = clientFor(opts());
  const items: T[] = [];
  let token: string | undefined;
  for (;;) {
    const res = await client.request<{ items: T[]; metadata: { continue?: string } }>('GET', path, { query: { limit: '500', ...(token ? { continue: token } : {}) } });
    if (res.status !== 200) return res;
    items.push(...res.body.items);
    token = res.body.metadata.continue;
    if (!token) return { ...res, body: { ...res.body, items } };
  }
}

const seed = program.command('seed').description('seeds: clusters that host control planes');
seed.command('list').description('list seeds').action(async () => print(await listAll<Seed>('/seeds'), (b) => seedRows(b.items)));
seed.command('get <name>').description('show one seed').action(async (name: string) =>
  print(await clientFor(opts()).request<Seed>('GET', `/seeds/${name}`), (s) => JSON.stringify(s, null, 2)));
seed
  .command('apply')
  .description('register or update a seed from a JSON file')
  .requiredOption('-f, --file <file>', 'Seed JSON ("-" for stdin)')
  .action(async ({ file }: { file: string }) => {
    const body = readJson(file);
    const name = (body.metadata as { name?: string } | undefined)?.name;
    if (!name) throw new Error('the seed needs metadata.name');
    print(await clientFor(opts()).request<Seed>('PUT', `/seeds/${name}`, { body }), (s) => `seed/${s.metadata.name} applied (resourceVersion ${s.metadata.resourceVersion})`);
  });
seed.command('delete <name>').description('delete a seed that hosts no shoots').action(async (name: string) =>
  print(await clientFor(opts()).request('DELETE', `/seeds/${name}`), () => `seed/${name} deleted`));

const shoot = program.command('shoot').description('shoots: clusters whose control planes run on seeds');
shoot.command('list <project>').description("list a project's shoots").action(async (project: string) =>
  print(await listAll<Shoot>(`/projects/${project}/shoots`), (b) => shootRows(b.items)));
shoot.command('get <ref>').description('show one shoot (<project>/<name>)').action(async (ref: string) => {
  const [project, name] = splitShoot(ref);
  print(await clientFor(opts()).request<Shoot>('GET', `/projects/${project}/shoots/${name}`), (s) => JSON.stringify(s, null, 2));
});
shoot
  .command('apply')
  .description('create or update a shoot from a JSON file')
  .requiredOption('-f, --file <file>', 'Shoot JSON with metadata.project and metadata.name ("-" for stdin)')
  .action(async ({ file }: { file: string }) => {
    const body = readJson(file);
    const meta = body.metadata as { project?: string; name?: string } | undefined;
    if (!meta?.project || !meta.name) throw new Error('the shoot needs metadata.project and metadata.name');
    print(await clientFor(opts()).request<Shoot>('PUT', `/projects/${meta.project}/shoots/${meta.name}`, { body }), (s) =>
      `shoot/${s.metadata.project}/${s.metadata.name} applied (seed ${s.status.seedName ?? '<unscheduled>'})`);
  });
shoot.command('delete <ref>').description('delete a shoot').action(async (ref: string) => {
  const [project, name] = splitShoot(ref);
  print(await clientFor(opts()).request('DELETE', `/projects/${project}/shoots/${name}`), () => `shoot/${ref} deleted`);
});

registerMigrateCommands(shoot, () => clientFor(opts()), () => opts().output);
registerMembersCommand(shoot, () => clientFor(opts()), () => opts().output);
registerBackupRestoreCommand(program);
registerSeedAgentCommand(program);

program
  .command('api <method> <path>')
  .description('send one signed request to the API and print the JSON answer')
  .option('-d, --data <json>', 'request body')
  .action(async (method: string, path: string, { data }: { data?: string }) =>
    print(await clientFor(opts()).request(method.toUpperCase(), path, data === undefined ? {} : { body: data }), (b) => JSON.stringify(b, null, 2)));

try {
  await program.parseAsync(process.argv);
} catch (error) {
  console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
