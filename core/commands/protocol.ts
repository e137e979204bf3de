import { z } from 'zod';
import { ValidationError } from '../errors.js';
import {
  COMMAND_API_VERSION,
  COMMAND_FAILURES,
  commandResultSchemas,
  protocolRegistry,
  seedCommandSchema,
  commandSuccessSchema,
  commandFailureCauseSchema,
  commandProgressSchema,
  type CommandFailureCause,
  type CommandFailureName,
  type CommandResult,
  type CommandSuccess,
  type CommandType,
  type SeedCommand,
} from './schema.js';

/** A message that is not a valid v1 command (or is addressed to another seed). The agent answers InvalidCommand. */
export class InvalidCommandError extends ValidationError {
  constructor(
    message: string,
    readonly issues: readonly { path: string; message: string }[],
    options?: { cause?: unknown },
  ) {
    super(message, { code: 'InvalidCommand', ...(issues[0] ? { field: issues[0].path } : {}), ...options });
  }
}

/** Step Functions' limit on a SendTaskFailure cause. */
export const MAX_FAILURE_CAUSE_CHARS = 32_768;

/** Parses a queue message body (JSON text or an already parsed value); `seed` refuses commands addressed elsewhere. */
export function parseCommand(body: unknown, options: { seed?: string } = {}): SeedCommand {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body) as unknown;
    } catch (cause) {
      throw new InvalidCommandError('the command is not JSON', [{ path: '', message: 'not JSON' }], { cause });
    }
  }
  const apiVersion = (value as { apiVersion?: unknown } | null)?.apiVersion;
  if (apiVersion !== COMMAND_API_VERSION) {
    throw new InvalidCommandError(
      `unsupported apiVersion ${JSON.stringify(apiVersion)}; this agent speaks ${COMMAND_API_VERSION}`,
      [{ path: 'apiVersion', message: 'unsupported' }],
    );
  }
  const parsed = seedCommandSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
    throw new InvalidCommandError(
      `invalid command: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`,
      issues,
      { cause: parsed.error },
    );
  }
  if (options.seed !== undefined && parsed.data.seed !== options.seed) {
    throw new InvalidCommandError(
      `command ${parsed.data.commandId} is addressed to seed ${parsed.data.seed}, not ${options.seed}`,
      [{ path: 'seed', message: 'another seed' }],
    );
  }
  return parsed.data;
}

/** `parseCommand` for a message that may be anything: the command, or why it is not one (nothing else is thrown). */
export function readCommand(
  body: unknown,
  options: { seed?: string } = {},
): { command: SeedCommand; invalid?: undefined } | { command?: undefined; invalid: InvalidCommandError } {
  try {
    return { command: parseCommand(body, options) };
  } catch (error) {
    if (error instanceof InvalidCommandError) return { invalid: error };
    throw error;
  }
}

/** The output for SendTaskSuccess, validated against the command's result schema. */
export function commandSuccess<T extends CommandType>(
  command: Extract<SeedCommand, { type: T }>,
  result: CommandResult<T>,
  now: Date,
): CommandSuccess<T> {
  const checked = commandResultSchemas[command.type as T].parse(result) as CommandResult<T>;
  return {
    apiVersion: COMMAND_API_VERSION,
    commandId: command.commandId,
    seed: command.seed,
    completedAt: now.toISOString(),
    type: command.type as T,
    result: checked,
  };
}

/** Parses a task output on the garden side (what the state machine hands the next Lambda). */
export function parseCommandSuccess<T extends CommandType>(type: T, output: unknown): CommandSuccess<T> {
  const parsed = commandSuccessSchema.parse(output) as CommandSuccess;
  if (parsed.type !== type)
    throw new InvalidCommandError(`expected the answer to a ${type} command, got one to ${parsed.type}`, [
      { path: 'type', message: 'unexpected type' },
    ]);
  return parsed as CommandSuccess<T>;
}

/** The `error` and `cause` for SendTaskFailure, within Step Functions' limits. */
export function commandFailure(options: {
  error: CommandFailureName;
  message: string;
  seed: string;
  command?: Pick<SeedCommand, 'commandId' | 'type'>;
  details?: Record<string, unknown>;
}): { error: CommandFailureName; cause: string } {
  const cause: CommandFailureCause = {
    apiVersion: COMMAND_API_VERSION,
    ...(options.command ? { commandId: options.command.commandId, type: options.command.type } : {}),
    seed: options.seed,
    error: options.error,
    message: options.message.slice(0, 4096),
    retryable: COMMAND_FAILURES[options.error].retryable,
    ...(options.details ? { details: options.details } : {}),
  };
  let text = JSON.stringify(cause);
  if (text.length > MAX_FAILURE_CAUSE_CHARS) {
    const { details: _dropped, ...rest } = cause;
    text = JSON.stringify({
      ...rest,
      message: `${rest.message.slice(0, 2048)} (details dropped: the cause exceeded ${MAX_FAILURE_CAUSE_CHARS} characters)`,
    });
  }
  return { error: options.error, cause: text };
}

/** Reads a SendTaskFailure cause back (in a Lambda after a Catch); undefined when it is not one of ours. */
export function parseFailureCause(cause: string | undefined): CommandFailureCause | undefined {
  if (cause === undefined) return undefined;
  try {
    const parsed = commandFailureCauseSchema.safeParse(JSON.parse(cause));
    return parsed.success ? parsed.data : undefined;
  } catch {
    // Not JSON: a States.* error or a Lambda error, not an agent answer.
    return undefined;
  }
}

/** The command id the garden uses for a migration step: the same for every retry of that step. */
export function migrationCommandId(options: { migrationId: string; step: string }): string {
  return `${options.migrationId}/${options.step}`;
}

/** The protocol as one JSON Schema (draft 2020-12) document, with every message under `$defs`. */
export function commandProtocolJsonSchema(): Record<string, unknown> {
  const root = z.union([seedCommandSchema, commandSuccessSchema, commandFailureCauseSchema, commandProgressSchema]);
  const generated = z.toJSONSchema(root, {
    target: 'draft-2020-12',
    metadata: protocolRegistry,
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  return {
    $schema,
    $id: 'https://gardenless.io/schemas/commands.gardenless.io/v1/command-protocol.schema.json',
    title: `gardenless seed command protocol (${COMMAND_API_VERSION})`,
    description:
      "Messages between the garden and a seed agent. A SeedCommand travels on the seed's SQS queue; the agent answers a command that carries a taskToken with SendTaskSuccess (output: CommandSuccess) or SendTaskFailure (error: CommandFailureCause.error, cause: CommandFailureCause as JSON), and calls SendTaskHeartbeat while it works (logging CommandProgress). See docs/command-protocol.md.",
    'x-failures': Object.fromEntries(
      Object.entries(COMMAND_FAILURES).map(([name, f]) => [name, { retryable: f.retryable, meaning: f.meaning }]),
    ),
    ...rest,
  };
}
