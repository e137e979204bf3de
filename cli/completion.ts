import type { Command } from 'commander';
import { OUTPUT_FORMATS } from './config.js';

/** One command of the tree: its words after the program name, its subcommands and its long options. */
interface Node {
  path: string[];
  subcommands: string[];
  options: string[];
}

function walk(cmd: Command, path: string[] = []): Node[] {
  const here: Node = {
    path,
    subcommands: cmd.commands.map((c) => c.name()),
    options: [...cmd.options.flatMap((o) => [o.long, o.short].filter((x): x is string => Boolean(x))), '--help'],
  };
  return [here, ...cmd.commands.flatMap((c) => walk(c, [...path, c.name()]))];
}

function bash(program: Command): string {
  const name = program.name();
  const fn = `_${name.replace(/[^A-Za-z0-9_]/g, '_')}`;
  const cases = walk(program)
    .map((n) => `    "${n.path.join(' ')}") words="${[...n.subcommands, ...n.options].join(' ')}" ;;`)
    .join('\n');
  return `# ${name} completion for bash; load it with: source <(${name} completion bash)
${fn}() {
  local cur prev path="" words w
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [[ "$prev" == "-o" || "$prev" == "--output" ]]; then
    COMPREPLY=( $(compgen -W "${OUTPUT_FORMATS.join(' ')}" -- "$cur") )
    return
  fi
  for w in "\${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    case "$w" in -*) continue ;; esac
    local next="\${path:+$path }$w"
    case "$next" in
${walk(program)
  .filter((n) => n.path.length > 0)
  .map((n) => `      "${n.path.join(' ')}") path="$next" ;;`)
  .join('\n')}
    esac
  done
  case "$path" in
${cases}
    *) words="" ;;
  esac
  COMPREPLY=( $(compgen -W "$words" -- "$cur") )
}
complete -o default -F ${fn} ${name}
`;
}

function zsh(program: Command): string {
  return `#compdef ${program.name()}
# ${program.name()} completion for zsh; load it with: source <(${program.name()} completion zsh)
autoload -U +X bashcompinit && bashcompinit
${bash(program).split('\n').slice(1).join('\n')}`;
}

function fish(program: Command): string {
  const name = program.name();
  const lines = [
    `# ${name} completion for fish; load it with: ${name} completion fish | source`,
    `complete -c ${name} -f`,
  ];
  lines.push(`complete -c ${name} -s o -l output -x -a "${OUTPUT_FORMATS.join(' ')}" -d "output format"`);
  for (const node of walk(program)) {
    const condition =
      node.path.length === 0
        ? '__fish_use_subcommand'
        : `__fish_seen_subcommand_from ${node.path.at(-1)}; and not __fish_seen_subcommand_from ${node.subcommands.join(' ') || '__none__'}`;
    for (const sub of node.subcommands) lines.push(`complete -c ${name} -n "${condition}" -a ${sub}`);
    for (const opt of node.options.filter((o) => o.startsWith('--') && o !== '--output')) {
      lines.push(
        `complete -c ${name} -n "${node.path.length === 0 ? 'true' : `__fish_seen_subcommand_from ${node.path.at(-1)}`}" -l ${opt.slice(2)}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** A completion script for `shell`, generated from the program's command tree. */
export function completionScript(program: Command, shell: Shell): string {
  return shell === 'bash' ? bash(program) : shell === 'zsh' ? zsh(program) : fish(program);
}
