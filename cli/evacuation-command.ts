import type { Command } from 'commander';
import type { Evacuation } from '../core/evacuation/record.js';
import { tally } from '../core/evacuation/record.js';
import type { Api } from './api.js';
import type { OutputFormat } from './config.js';
import { serialize } from './output.js';
import { seedName } from './refs.js';
import { age, table } from './render.js';

/** One line per evacuation: seed, phase, shoots by state, how long ago the seed was lost. */
export function evacuationTable(items: readonly Evacuation[], now: Date): string {
  return table(
    ['SEED', 'PHASE', 'MOVED', 'MIGRATING', 'PENDING', 'FAILED', 'GONE', 'MAX-PARALLEL', 'LOST', 'HELD'],
    items.map((e) => {
      const t = tally(e);
      return [
        e.seed,
        e.phase,
        String(t.Moved),
        String(t.Migrating),
        String(t.Pending),
        String(t.Failed),
        String(t.Gone),
        String(e.maxParallel),
        age(e.lostSince, now),
        e.held ? 'yes' : '-',
      ];
    }),
  );
}

/** One evacuation shoot by shoot, with its reason line. */
export function evacuationDetail(e: Evacuation, now: Date): string {
  const head = `seed ${e.seed}: ${e.phase}${e.reason ? ` (${e.reason})` : ''}; lost ${age(e.lostSince, now)} ago; at most ${e.maxParallel} holding a place${e.held ? `\nheld: ${e.held}` : ''}`;
  const rows = e.shoots.map((s) => [
    `${s.project}/${s.name}`,
    // A move past its restore ahead and owner change waits for its copy without holding a place.
    s.state === 'Migrating' && s.slotFreedAt ? 'Migrating (place freed)' : s.state,
    String(s.priority),
    s.destination ?? '-',
    s.migrationId ?? '-',
    s.reason ?? '',
  ]);
  return `${head}\n${table(['SHOOT', 'STATE', 'PRIORITY', 'DESTINATION', 'MIGRATION', 'REASON'], rows)}`;
}

/**
 * `gardenless evacuation list|get|pause|resume|cancel`: see the evacuations of lost seeds, and stop or
 * go on with one (moves under way always finish).
 */
export function registerEvacuationCommands(
  program: Command,
  connect: () => Promise<Api>,
  output: () => OutputFormat,
  now: () => Date = () => new Date(),
): void {
  const evacuation = program
    .command('evacuation')
    .description('evacuations of seeds whose lease is lost (opt-in per seed: spec.settings.evacuation)');
  const print = async (value: Evacuation | Evacuation[], text: () => string) => {
    const format = output();
    if (format === 'json' || format === 'yaml')
      console.log(await serialize(Array.isArray(value) ? { items: value } : value, format));
    else if (format === 'name')
      console.log((Array.isArray(value) ? value : [value]).map((e) => `evacuation/${e.seed}`).join('\n'));
    else console.log(text());
  };
  evacuation
    .command('list')
    .alias('ls')
    .description('the latest evacuation of every seed ever evacuated')
    .option('--active', 'only those still running, paused or finishing')
    .action(async (flags: { active?: boolean }) => {
      const { items } = await (
        await connect()
      ).expect<{ items: Evacuation[] }>('GET', '/evacuations', flags.active ? { query: { active: 'true' } } : {});
      if (items.length === 0 && output() !== 'json' && output() !== 'yaml') console.error('No evacuations found.');
      else await print(items, () => evacuationTable(items, now()));
    });
  evacuation
    .command('get <seed>')
    .description("a seed's current or last evacuation, shoot by shoot")
    .action(async (seed: string) => {
      const e = await (await connect()).expect<Evacuation>('GET', `/seeds/${seedName(seed)}/evacuation`);
      await print(e, () => evacuationDetail(e, now()));
    });
  for (const [control, description] of [
    ['pause', 'start no new move; moves under way finish'],
    ['resume', 'go on with a paused evacuation'],
    ['cancel', 'start no new move; moves under way finish, then it ends Cancelled and the other shoots stay'],
  ] as const) {
    evacuation
      .command(`${control} <seed>`)
      .description(description)
      .action(async (seed: string) => {
        const e = await (await connect()).expect<Evacuation>('POST', `/seeds/${seedName(seed)}/evacuation/${control}`);
        await print(e, () => `evacuation/${e.seed} ${e.phase}`);
      });
  }
}
