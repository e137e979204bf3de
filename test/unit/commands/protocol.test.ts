import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import {
  COMMAND_FAILURE_NAMES,
  COMMAND_FAILURES,
  COMMAND_TYPES,
  commandFailure,
  commandSuccess,
  InvalidCommandError,
  MAX_FAILURE_CAUSE_CHARS,
  migrationCommandId,
  parseCommand,
  parseCommandSuccess,
  parseFailureCause,
  type CommandOf,
  type SeedCommand,
} from '../../../core/commands/index.js';
import { COMMAND_PROTOCOL_SCHEMA_PATH, renderCommandProtocolSchema } from '../../../scripts/command-protocol.js';
import { fixture } from '../../../harness/fixtures/index.js';

const NOW = new Date('2025-01-01T00:01:00Z');
const example = <T extends SeedCommand['type']>(type: T) => fixture(`commands/${type}`) as unknown as CommandOf<T>;

describe('parseCommand', () => {
  it.each(COMMAND_TYPES)('accepts the %s example, as JSON text and as a value', (type) => {
    // Prepare
    const command = example(type);

    // Act
    const fromText = parseCommand(JSON.stringify(command));
    const fromValue = parseCommand(command);

    // Assess
    expect(fromText).toEqual(command);
    expect(fromValue.type).toBe(type);
  });

  it.each([
    ['not JSON', () => '{', ''],
    ['another apiVersion', () => ({ ...example('migrate'), apiVersion: 'commands.gardenless.io/v2' }), 'apiVersion'],
    ['an unknown type', () => ({ ...example('migrate'), type: 'explode' }), 'type'],
    ['no commandId', () => ({ ...example('migrate'), commandId: undefined }), 'commandId'],
    ['a commandId with spaces', () => ({ ...example('migrate'), commandId: 'a b' }), 'commandId'],
    [
      'a technical ID that is not shoot--p--n',
      () => ({ ...example('migrate'), shoot: { project: 'dev', name: 'api1', technicalID: 'dev-api1' } }),
      'shoot.technicalID',
    ],
    ['an issuedAt that is not a time', () => ({ ...example('migrate'), issuedAt: 'yesterday' }), 'issuedAt'],
    [
      'a task token longer than Step Functions allows',
      () => ({ ...example('migrate'), taskToken: 'x'.repeat(1025) }),
      'taskToken',
    ],
    ['an unknown field', () => ({ ...example('migrate'), force: true }), ''],
    [
      'a delete that would not keep backups',
      () => ({ ...example('delete-control-plane'), keepBackups: false }),
      'keepBackups',
    ],
    [
      'a delete whose external resources flag is not a boolean',
      () => ({ ...example('delete-control-plane'), keepExternalResources: 'no' }),
      'keepExternalResources',
    ],
    [
      'a delete whose ifNotOwner is not a boolean',
      () => ({ ...example('delete-control-plane'), ifNotOwner: 1 }),
      'ifNotOwner',
    ],
    ['a restore of nothing', () => ({ ...example('restore'), etcd: undefined, extensions: undefined }), 'etcd'],
    [
      'a restore whose blob reference has no sha256',
      () => {
        const c = example('restore');
        const ext = c.extensions!.shootState.extensions[1]!;
        return {
          ...c,
          extensions: {
            ...c.extensions!,
            shootState: {
              ...c.extensions!.shootState,
              extensions: [{ ...ext, state: { ref: { key: 'k', size: 1 } } }],
            },
          },
        };
      },
      'extensions.shootState.extensions.0.state',
    ],
    [
      'a scale of a component the watchdog does not scale',
      () => ({ ...example('scale'), component: 'etcd' }),
      'component',
    ],
    ['a scale to negative replicas', () => ({ ...example('scale'), replicas: -1 }), 'replicas'],
    ['a restart for an unknown dependency', () => ({ ...example('restart'), dependency: 'dns' }), 'dependency'],
    ['a migrate without a state bucket', () => ({ ...example('migrate'), stateBucket: undefined }), 'stateBucket'],
    [
      'a check-owner notice with a task token (it is never answered)',
      () => ({ ...example('check-owner'), taskToken: 't' }),
      'taskToken',
    ],
    ['a check-owner notice of an unknown change', () => ({ ...example('check-owner'), change: 'moved' }), 'change'],
    ['a hand-over notice that waits for an answer', () => ({ ...example('hand-over'), taskToken: 't' }), 'taskToken'],
    [
      'a hand-over to a URL with a path',
      () => ({ ...example('hand-over'), target: 'https://lb.example.com:443/x' }),
      'target',
    ],
    ['a hand-over to plain HTTP', () => ({ ...example('hand-over'), target: 'http://lb.example.com:80' }), 'target'],
    ['a hand-over of a name that is no DNS name', () => ({ ...example('hand-over'), apiDomain: 'API_1' }), 'apiDomain'],
    ['a hand-over without an end', () => ({ ...example('hand-over'), until: undefined }), 'until'],
    [
      'a restore ahead with a revision to expect (it restores what is there now)',
      () => ({
        ...example('restore'),
        etcd: { bucket: 'gl-backup-aws-eu2', final: false, ahead: true, expectedLastRevision: 5 },
      }),
      'etcd.ahead',
    ],
    [
      'a restore ahead of a final copy (it runs before the fence)',
      () => ({ ...example('restore'), etcd: { bucket: 'gl-backup-aws-eu2', final: true, ahead: true } }),
      'etcd.ahead',
    ],
    [
      'a restore ahead with the override of the fidelity check (it serves nothing)',
      () => ({
        ...example('restore'),
        etcd: { bucket: 'gl-backup-aws-eu2', final: false, ahead: true, acceptDigestMismatch: true },
      }),
      'etcd.acceptDigestMismatch',
    ],
    [
      'a restore ahead that is not a boolean',
      () => ({ ...example('restore'), etcd: { bucket: 'gl-backup-aws-eu2', final: false, ahead: 'yes' } }),
      'etcd.ahead',
    ],
    [
      'an unknown field in the etcd restore',
      () => ({ ...example('restore'), etcd: { bucket: 'gl-backup-aws-eu2', final: false, aheadOf: 3 } }),
      'etcd',
    ],
  ])('refuses %s', (_name, body, field) => {
    // Act
    const parse = () => parseCommand(body());

    // Assess
    expect(parse).toThrow(InvalidCommandError);
    try {
      parse();
    } catch (error) {
      expect((error as InvalidCommandError).issues.map((i) => i.path)).toContain(field);
      expect((error as InvalidCommandError).code).toBe('InvalidCommand');
    }
  });

  it('refuses a command addressed to another seed', () => {
    // Act / Assess
    expect(() => parseCommand(example('migrate'), { seed: 'aws-eu2' })).toThrow(
      /addressed to seed aws-eu1, not aws-eu2/,
    );
    expect(parseCommand(example('migrate'), { seed: 'aws-eu1' }).seed).toBe('aws-eu1');
  });

  it('accepts a restore ahead: etcd only, of what the bucket holds now, not final', () => {
    // Prepare
    const { extensions: _x, ...restore } = example('restore');
    const ahead = {
      ...restore,
      commandId: 'mig-1/restore-etcd-ahead',
      etcd: { bucket: 'gl-backup-aws-eu2', final: false, ahead: true },
    };

    // Act / Assess
    expect(parseCommand(JSON.stringify(ahead))).toEqual(ahead);
    expect(
      parseCommand({ ...ahead, etcd: { ...ahead.etcd, ahead: false, final: true, expectedLastRevision: 7 } }).type,
    ).toBe('restore');
  });

  it('keeps any valid command through a JSON round trip', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...COMMAND_TYPES),
        fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,40}$/),
        fc.option(fc.integer({ min: 1, max: 3600 }), { nil: undefined }),
        (type, commandId, heartbeatSeconds) => {
          // Prepare
          const command = {
            ...example(type),
            commandId,
            ...(heartbeatSeconds === undefined ? {} : { heartbeatSeconds }),
          };

          // Act
          const parsed = parseCommand(JSON.stringify(command));

          // Assess
          expect(parsed).toEqual(command);
        },
      ),
    );
  });
});

describe('answers', () => {
  it('a success carries the command id and a result checked against the command type', () => {
    // Prepare
    const command = example('delete-control-plane');

    // Act
    const output = commandSuccess(command, { deleted: true, extensionsDropped: 8 }, NOW);

    // Assess
    expect(output).toEqual({
      apiVersion: 'commands.gardenless.io/v1',
      commandId: 'mig-1/delete-control-plane',
      seed: 'aws-eu1',
      completedAt: NOW.toISOString(),
      type: 'delete-control-plane',
      result: { deleted: true, extensionsDropped: 8 },
    });
    expect(parseCommandSuccess('delete-control-plane', JSON.parse(JSON.stringify(output)))).toEqual(output);
    expect(() => parseCommandSuccess('migrate', output)).toThrow(InvalidCommandError);
    expect(() => commandSuccess(command, { deleted: 'yes' } as never, NOW)).toThrow();
  });

  it.each([
    ['restored ahead and waiting', { restoredRevision: 90, snapshots: 3, final: false, ahead: true }],
    [
      'declined: this runtime or shoot does not restore ahead',
      { restoredRevision: 0, snapshots: 0, final: false, ahead: false },
    ],
    [
      'the normal restore, caught up from a restore ahead',
      { restoredRevision: 101, snapshots: 4, final: true, aheadRevision: 90 },
    ],
    ['the normal restore, in full (as before the pre-copy)', { restoredRevision: 101, snapshots: 4, final: true }],
  ])('a restore success may say it was %s', (_name, etcd) => {
    // Act
    const output = commandSuccess(example('restore'), { etcd }, NOW);

    // Assess
    expect(parseCommandSuccess('restore', JSON.parse(JSON.stringify(output))).result.etcd).toEqual(etcd);
  });

  it.each([
    ['an unknown field', { restoredRevision: 1, snapshots: 1, final: true, caughtUp: true }],
    ['an ahead revision that is not a revision', { restoredRevision: 1, snapshots: 1, final: true, aheadRevision: -1 }],
    ['an ahead that is not a boolean', { restoredRevision: 1, snapshots: 1, final: false, ahead: 'yes' }],
  ])('a restore success with %s is refused', (_name, etcd) => {
    const output = {
      ...commandSuccess(example('restore'), { etcd: { restoredRevision: 1, snapshots: 1, final: true } }, NOW),
      result: { etcd },
    };
    expect(() => parseCommandSuccess('restore', output)).toThrow(ZodError);
  });

  it('a migrate success carries the packed ShootState', () => {
    // Prepare
    const command = example('migrate');
    const shootState = example('restore').extensions!.shootState;

    // Act
    const output = commandSuccess(
      command,
      { shootState, extensions: [{ kind: 'Infrastructure', name: 'shoot--dev--api1', action: 'migrate' }] },
      NOW,
    );

    // Assess
    expect(parseCommandSuccess('migrate', output).result.shootState).toEqual(shootState);
  });

  it.each(COMMAND_FAILURE_NAMES)('failure %s round-trips through SendTaskFailure error and cause', (name) => {
    // Act
    const failure = commandFailure({
      error: name,
      message: 'it broke',
      seed: 'aws-eu1',
      command: example('restore'),
      details: { kind: 'Worker' },
    });

    // Assess
    expect(failure.error).toBe(name);
    expect(failure.error.length).toBeLessThanOrEqual(256);
    expect(parseFailureCause(failure.cause)).toEqual({
      apiVersion: 'commands.gardenless.io/v1',
      commandId: 'mig-1/restore',
      type: 'restore',
      seed: 'aws-eu1',
      error: name,
      message: 'it broke',
      retryable: COMMAND_FAILURES[name].retryable,
      details: { kind: 'Worker' },
    });
  });

  it('keeps a failure cause within the Step Functions limit', () => {
    // Act
    const failure = commandFailure({
      error: 'ExtensionOperationFailed',
      message: 'm'.repeat(10_000),
      seed: 'aws-eu1',
      details: { log: 'l'.repeat(100_000) },
    });

    // Assess
    expect(failure.cause.length).toBeLessThanOrEqual(MAX_FAILURE_CAUSE_CHARS);
    expect(parseFailureCause(failure.cause)?.details).toBeUndefined();
  });

  it.each([
    ['a States.Timeout cause', undefined],
    ['not json', 'boom'],
    ['a Lambda error', JSON.stringify({ errorMessage: 'x', errorType: 'Error' })],
  ])('parseFailureCause ignores %s', (_name, cause) => {
    expect(parseFailureCause(cause)).toBeUndefined();
  });

  it('names a migration step command the same way on every retry', () => {
    expect(migrationCommandId({ migrationId: 'mig-1', step: 'migrate-extensions' })).toBe('mig-1/migrate-extensions');
  });
});

describe('the committed JSON Schema', () => {
  it('is the one the zod schemas generate (run npx tsx scripts/command-protocol.ts after changing them)', () => {
    // Act
    const committed = readFileSync(COMMAND_PROTOCOL_SCHEMA_PATH, 'utf8');

    // Assess
    expect(committed).toBe(renderCommandProtocolSchema());
  });

  it('names every command, result and answer', () => {
    // Act
    const doc = JSON.parse(renderCommandProtocolSchema()) as { $defs: Record<string, unknown>; $ref?: string };

    // Assess
    expect(Object.keys(doc.$defs)).toEqual(
      expect.arrayContaining([
        'SeedCommand',
        'CreateControlPlaneCommand',
        'ReconcileCommand',
        'MigrateCommand',
        'DeleteControlPlaneCommand',
        'RestoreCommand',
        'ScaleCommand',
        'RestartCommand',
        'CommandSuccess',
        'CreateControlPlaneResult',
        'ReconcileResult',
        'MigrateResult',
        'DeleteControlPlaneResult',
        'RestoreResult',
        'ScaleResult',
        'RestartResult',
        'CommandFailureCause',
        'CommandProgress',
        'PackedShootState',
      ]),
    );
  });
});
