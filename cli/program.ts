import { Command, Option } from 'commander';
import type { Seed } from '../core/model/seed.js';
import type { Shoot } from '../core/model/shoot.js';
import { Api } from './api.js';
import { applyManifest, type ApplyKind } from './apply.js';
import { completionScript, SHELLS, type Shell } from './completion.js';
import { OUTPUT_FORMATS, type CliOptions } from './config.js';
import { requireConfirmation } from './confirm.js';
import { controlPlaneList, type ControlPlaneLayout } from './controlplane.js';
import { readManifests } from './manifests.js';
import { registerEvacuationCommands } from './evacuation-command.js';
import { registerKubeconfigCommand } from './kubeconfig-command.js';
import { registerMembersCommand } from './members-command.js';
import { registerMigrateCommands } from './migrate-command.js';
import { asList, formatResources, resourceName, serialize } from './output.js';
import { seedName, splitShoot } from './refs.js';
import { scheduleTable, seedTable, shootTable, type DryRunResult } from './render.js';
import { cliVersion } from './version.js';

export type Program = Command & { opts(): CliOptions };

/** The annotation Gardener requires before it deletes a shoot; the API refuses a deletion without it. */
export const DELETION_CONFIRMATION = 'confirmation.gardener.cloud/deletion';

/** The long-running commands: registered as stubs for --help, loaded for real when they run. */
const SERVER_COMMANDS = {
  'seed-agent':
    "run a seed's agent: heartbeats, its command queue, control planes on this machine (runtime local) or on a Kubernetes seed (runtime kubernetes)",
  'backup-restore': 'the backup-restore sidecar of one shoot etcd: snapshots, owner watchdog, restore, copy',
} as const;

/** Global options that take a value: the word after them is not a command. */
const VALUED_GLOBALS = new Set(['-o', '--output', '--api-url', '--region']);

/** The command word in argv (`gardenless -o json shoot list` → `shoot`). */
export function commandWord(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (VALUED_GLOBALS.has(a)) i++;
    else if (!a.startsWith('-')) return a;
  }
  return undefined;
}

/** Replaces the stubs of the long-running commands with the real ones (their modules are heavy). */
export async function loadServerCommands(program: Command): Promise<void> {
  const [{ registerSeedAgentCommand }, { registerBackupRestoreCommand }] = await Promise.all([
    import('./seed-agent-command.js'),
    import('./backup-restore-command.js'),
  ]);
  const commands = program.commands as Command[];
  for (const name of Object.keys(SERVER_COMMANDS)) {
    const i = commands.findIndex((c) => c.name() === name);
    if (i >= 0) commands.splice(i, 1);
  }
  registerSeedAgentCommand(program);
  registerBackupRestoreCommand(program);
}

/** The shoot's last operation has ended: Succeeded or Failed (Error is retried, as in Gardener). */
function settled(shoot: Shoot): boolean {
  const state = shoot.status.lastOperation?.state;
  return state === 'Succeeded' || state === 'Failed';
}

function print(text: string): void {
  if (text !== '') console.log(text);
}

export function buildProgram(): Program {
  const program = new Command('gardenless')
    .description('Operate a gardenless garden: seeds, shoots and control-plane migrations')
    .version(cliVersion(), '-V, --version', 'print the version')
    .addOption(new Option('-o, --output <format>', 'output format').choices([...OUTPUT_FORMATS]).default('table'))
    .option('--api-url <url>', 'garden API URL (default: GARDENLESS_API_URL or the local landscape)')
    .option('--region <region>', 'AWS region for SigV4 signing') as Program;

  const opts = (): CliOptions => program.opts();
  const connect = () => Api.connect(opts());
  const now = () => new Date();

  const applyCommand = (cmd: Command, fallback?: ApplyKind) =>
    cmd
      .requiredOption('-f, --filename <path...>', 'YAML or JSON files, directories of them, or - for stdin')
      .action(async ({ filename }: { filename: string[] }) => {
        const manifests = await readManifests(filename);
        if (manifests.length === 0) throw new Error('no objects passed to apply');
        const api = await connect();
        const format = opts().output;
        const applied: unknown[] = [];
        for (const m of manifests) {
          try {
            const { outcome, resource } = await applyManifest(api, m, fallback);
            applied.push(resource);
            if (format === 'name') print(resourceName(resource));
            else if (format !== 'json' && format !== 'yaml') print(`${resourceName(resource)} ${outcome}`);
          } catch (error) {
            // kubectl goes on with the other objects and fails at the end.
            const message = error instanceof Error ? error.message : String(error);
            console.error(`error: ${message.startsWith(m.source) ? message : `${m.source}: ${message}`}`);
            process.exitCode = 1;
          }
        }
        if (format === 'json' || format === 'yaml')
          print(await serialize(applied.length === 1 ? applied[0] : asList(applied), format));
      });

  applyCommand(
    program
      .command('apply')
      .description(
        'create or update seeds and shoots from files (kind Seed or Shoot): created, configured or unchanged',
      ),
  );

  const seed = program.command('seed').description('seeds: clusters that host control planes');
  const seeds = (items: Seed[], single: boolean) =>
    formatResources(items, { format: opts().output, single, table: (s, wide) => seedTable(s, { now: now(), wide }) });
  seed
    .command('list')
    .alias('ls')
    .description('list seeds (READY: the agent heartbeats and every condition is True)')
    .action(async () => {
      const items = await (await connect()).listAll<Seed>('/seeds');
      if (items.length === 0 && (opts().output === 'table' || opts().output === 'wide'))
        console.error('No resources found.');
      else print(await seeds(items, false));
    });
  seed
    .command('get <name...>')
    .description('show seeds (a table; -o yaml|json for the objects)')
    .action(async (names: string[]) => {
      const api = await connect();
      const items = await Promise.all(names.map((n) => api.expect<Seed>('GET', `/seeds/${seedName(n)}`)));
      print(await seeds(items, items.length === 1));
    });
  applyCommand(seed.command('apply').description('register or update seeds from files'), 'Seed');
  seed
    .command('delete <name>')
    .description('delete a seed that hosts no shoots')
    .action(async (name: string) => {
      await (await connect()).expect('DELETE', `/seeds/${seedName(name)}`);
      print(`seed/${seedName(name)} deleted`);
    });

  const shoot = program.command('shoot').description('shoots: clusters whose control planes run on seeds');
  const shoots = (items: Shoot[], single: boolean, allProjects: boolean) =>
    formatResources(items, {
      format: opts().output,
      single,
      table: (s, wide) => shootTable(s, { now: now(), wide, allProjects }),
    });
  shoot
    .command('list [project]')
    .alias('ls')
    .option('-A, --all-projects', 'the shoots of every project')
    .description("list a project's shoots, or every project's with -A")
    .action(async (project: string | undefined, flags: { allProjects?: boolean }) => {
      if (!project && !flags.allProjects) throw new Error('name a project, or pass -A for every project');
      if (project && flags.allProjects) throw new Error('a project and -A exclude each other');
      const items = await (await connect()).listAll<Shoot>(project ? `/projects/${project}/shoots` : '/shoots');
      const tabular = opts().output === 'table' || opts().output === 'wide';
      if (items.length === 0 && project) {
        // A project exists through its shoots: one without any is unknown to the garden.
        if (!tabular) print(await shoots(items, false, false));
        console.error(`No resources found in project "${project}".`);
        process.exitCode = 1;
      } else if (items.length === 0 && tabular) {
        console.error('No resources found.');
      } else {
        print(await shoots(items, false, !project));
      }
    });
  shoot
    .command('get <ref...>')
    .description('show shoots (<project>/<name>; a table, -o yaml|json for the objects)')
    .option('--wait', 'first wait until each shoot runs: its last operation Succeeded (Failed: exit 1)')
    .option('--timeout <seconds>', 'how long --wait waits', '300')
    .action(async (refs: string[], flags: { wait?: boolean; timeout: string }) => {
      const api = await connect();
      const read = () =>
        Promise.all(
          refs.map((r) => splitShoot(r)).map(([p, n]) => api.expect<Shoot>('GET', `/projects/${p}/shoots/${n}`)),
        );
      let items = await read();
      if (flags.wait) {
        const deadline = Date.now() + Number(flags.timeout) * 1000;
        // The last operation must have ended: a migration requested while Create is still in flight races it.
        const done = async (s: Shoot) => settled(s);
        while (!(await Promise.all(items.map(done))).every(Boolean) && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 1000));
          items = await read();
        }
        const waiting = (
          await Promise.all(
            items.map(async (s) => ((await done(s)) ? undefined : `${s.metadata.project}/${s.metadata.name}`)),
          )
        ).filter((x) => x !== undefined);
        if (waiting.length > 0) throw new Error(`${waiting.join(', ')}: not running after ${flags.timeout} s`);
        if (items.some((s) => s.status.lastOperation?.state === 'Failed')) process.exitCode = 1;
      }
      print(await shoots(items, items.length === 1, new Set(items.map((s) => s.metadata.project)).size > 1));
    });
  applyCommand(
    shoot.command('apply').description('create or update shoots from files (metadata.project and metadata.name)'),
    'Shoot',
  );
  shoot
    .command('delete <ref>')
    .description('delete a shoot and its control plane, after confirming (sets confirmation.gardener.cloud/deletion)')
    .option('-y, --yes', 'do not ask')
    .action(async (ref: string, flags: { yes?: boolean }) => {
      const [project, name] = splitShoot(ref);
      const api = await connect();
      const path = `/projects/${project}/shoots/${name}`;
      const current = await api.expect<Shoot>('GET', path);
      const where = current.status.seedName ? ` and its control plane on seed ${current.status.seedName}` : '';
      await requireConfirmation(
        'the deletion',
        `Delete shoot ${project}/${name}${where}? Its etcd backups stay in the seed's bucket.`,
        { yes: flags.yes ?? false },
      );
      await api.expect('PATCH', path, {
        body: { metadata: { annotations: { [DELETION_CONFIRMATION]: 'true' } } },
        headers: { 'content-type': 'application/merge-patch+json' },
      });
      const answer = await api.expect<{ kind?: string; metadata?: { deletionTimestamp?: string } }>('DELETE', path);
      // The API either deletes at once (a Status) or marks the shoot (deletionTimestamp) and removes it once its control plane is gone.
      print(
        answer.kind === 'Shoot' && answer.metadata?.deletionTimestamp
          ? `shoot/${project}/${name} deletion requested`
          : `shoot/${project}/${name} deleted`,
      );
    });
  shoot
    .command('controlplane <ref>')
    .description("the shoot's control-plane layout on its seed (GEP-20) as a v1 List: namespace, workloads, PDBs")
    .option('--image-vector <file>', 'images per component (YAML or JSON, as the seed agent takes it)')
    .action(async (ref: string, flags: { imageVector?: string }) => {
      const [project, name] = splitShoot(ref);
      const layout = await (
        await connect()
      ).expect<ControlPlaneLayout>('GET', `/projects/${project}/shoots/${name}/controlplane`);
      const vector = await import('../seed/kubernetes/image-vector.js');
      const list = controlPlaneList(
        layout,
        flags.imageVector ? vector.readImageVector(flags.imageVector) : vector.imageVector(),
      );
      const format = opts().output;
      if (format === 'name')
        print(list.items.map((o) => resourceName(o as { kind: string; metadata: { name: string } })).join('\n'));
      else if (format === 'json') print(await serialize(list, 'json'));
      else print(await serialize(list, 'yaml'));
    });
  registerMigrateCommands(shoot, connect, () => opts().output);
  registerMembersCommand(shoot, connect, () => opts().output);
  registerKubeconfigCommand(shoot, connect, () => opts().output);
  registerEvacuationCommands(program, connect, () => opts().output, now);

  program
    .command('schedule')
    .description('the scheduler')
    .command('dry-run')
    .description('where a shoot would be placed: the ranking and every rejected seed with its reason')
    .requiredOption('-f, --filename <path>', 'a Shoot (YAML or JSON, or - for stdin)')
    .action(async ({ filename }: { filename: string }) => {
      const manifests = await readManifests([filename]);
      if (manifests.length !== 1) throw new Error(`${filename}: expected one Shoot, found ${manifests.length} objects`);
      const { metadata, spec } = manifests[0]!.object as { metadata?: Record<string, unknown>; spec?: unknown };
      const result = await (
        await connect()
      ).expect<DryRunResult>('POST', '/scheduling/dry-run', {
        body: {
          shoot: {
            ...(metadata
              ? {
                  metadata: {
                    ...(metadata.name ? { name: metadata.name } : {}),
                    ...(metadata.project ? { project: metadata.project } : {}),
                  },
                }
              : {}),
            spec,
          },
        },
      });
      const format = opts().output;
      print(format === 'json' || format === 'yaml' ? await serialize(result, format) : scheduleTable(result));
    });

  program
    .command('completion')
    .description('print a shell completion script (bash: source <(gardenless completion bash))')
    .addArgument(program.createArgument('<shell>', 'bash, zsh or fish').choices([...SHELLS]))
    .action((shell: Shell) => void process.stdout.write(completionScript(program, shell)));

  program
    .command('api <method> <path>')
    .description('send one signed request to the API and print the JSON answer')
    .option('-d, --data <json>', 'request body')
    .action(async (method: string, path: string, { data }: { data?: string }) => {
      const body = await (await connect()).expect(method.toUpperCase(), path, data === undefined ? {} : { body: data });
      print(await serialize(body, opts().output === 'yaml' ? 'yaml' : 'json'));
    });

  for (const [name, description] of Object.entries(SERVER_COMMANDS)) {
    program.command(name).description(description).allowUnknownOption().helpOption(false).argument('[args...]');
  }
  return program;
}
