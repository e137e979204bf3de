// The AWS SDK warns on every process start that its 2027 releases need Node 22 (eight lines on stderr).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

import { ApiError, ApiUnreachableError } from './api.js';
import { buildProgram, commandWord, loadServerCommands, type Program } from './program.js';
import { serialize } from './output.js';

/** Prints why the command failed on stderr (the API's JSON error with -o json|yaml) and sets exit code 1. */
async function report(program: Program, error: unknown): Promise<void> {
  const format = program.opts().output;
  if (error instanceof ApiError && (format === 'json' || format === 'yaml'))
    console.error(await serialize(error.body, format));
  else if (error instanceof ApiError) console.error(error.message);
  else if (error instanceof ApiUnreachableError) console.error(`error: ${error.message}`);
  else console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}

const program = buildProgram();
// The long-running commands (agent, sidecar) load their modules only when they are asked for.
const first = commandWord(process.argv.slice(2));
if (first === 'seed-agent' || first === 'backup-restore' || first === 'completion') await loadServerCommands(program);
try {
  await program.parseAsync(process.argv);
} catch (error) {
  await report(program, error);
}
