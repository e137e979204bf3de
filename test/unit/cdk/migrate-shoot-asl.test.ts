import { Duration } from 'aws-cdk-lib';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrateShootDefinition } from '../../../cdk/migration.js';
import { COMMAND_FAILURES } from '../../../core/commands/schema.js';
import { RESTORE_AHEAD_HEARTBEAT_SECONDS } from '../../../core/migration/commands.js';
import { MIGRATION_STEP_IDS, PREPARE_STEPS } from '../../../core/migration/steps.js';
import {
  PERMANENT_TASK_ERRORS,
  SWITCH_TASK_ERRORS,
  TRANSIENT_TASK_ERRORS,
  WAIT_TASK_ERRORS,
} from '../../../functions/shared/task-errors.js';

const require = createRequire(import.meta.url);
const validator = require('asl-validator') as (definition: unknown) => { isValid: boolean; errorsText: () => string };

const raw = readFileSync(
  join(import.meta.dirname, '..', '..', '..', 'state-machines', 'migrate-shoot.asl.json'),
  'utf8',
);

interface State {
  Type: string;
  Resource?: string;
  Next?: string;
  Default?: string;
  Choices?: { Variable?: string; StringEquals?: string; BooleanEquals?: boolean; And?: unknown[]; Next: string }[];
  Retry?: { ErrorEquals: string[]; JitterStrategy?: string }[];
  Catch?: { ErrorEquals: string[]; Next: string; ResultPath?: string }[];
  TimeoutSeconds?: number;
  HeartbeatSeconds?: number;
  ResultPath?: string;
  Parameters?: { Payload?: Record<string, unknown>; 'Input.$'?: string };
}
type Definition = { StartAt: string; States: Record<string, State> };

function substituted(text: string): Definition {
  return JSON.parse(
    text.replace(/\$\{(\w+)\}/g, (_, n: string) =>
      n.endsWith('StateMachineArn')
        ? `arn:aws:states:eu-west-1:123456789012:stateMachine:${n}`
        : `arn:aws:lambda:eu-west-1:123456789012:function:${n}`,
    ),
  ) as Definition;
}

const definition = substituted(raw);
const states = Object.entries(definition.States);
const commandStates = states.filter(([, s]) => s.Resource === 'arn:aws:states:::lambda:invoke.waitForTaskToken');

describe('state-machines/migrate-shoot.asl.json', () => {
  it('is valid ASL once its substitutions are applied, and as the stack deploys it', () => {
    expect(validator(definition).errorsText()).toBe('');
    const deployed = substituted(JSON.stringify(migrateShootDefinition({ commandTimeout: Duration.seconds(15) })));
    expect(validator(deployed).isValid).toBe(true);
    for (const name of [
      'RestoreEtcdAhead',
      'RefreshEtcdAhead',
      'MigrateExtensions',
      'DeleteSourceControlPlane',
      'RestoreEtcd',
      'RestoreExtensions',
    ]) {
      expect(deployed.States[name]?.TimeoutSeconds).toBe(15);
      expect(deployed.States[name]?.HeartbeatSeconds).toBeLessThanOrEqual(15);
    }
  });

  it('substitutes exactly its four task functions and the copy-snapshots state machine', () => {
    const names = new Set([...raw.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]));
    expect([...names].sort()).toEqual([
      'CopySnapshotsStateMachineArn',
      'DispatchFunctionArn',
      'FinalSnapshotFunctionArn',
      'OwnerFunctionArn',
      'StepsFunctionArn',
    ]);
  });

  it('reaches every state from the start', () => {
    const seen = new Set<string>();
    const visit = (name: string) => {
      if (seen.has(name)) return;
      seen.add(name);
      const s = definition.States[name]!;
      for (const next of [
        s.Next,
        s.Default,
        ...(s.Choices ?? []).map((c) => c.Next),
        ...(s.Catch ?? []).map((c) => c.Next),
      ])
        if (next) visit(next);
    };
    visit(definition.StartAt);
    expect([...seen].sort()).toEqual(Object.keys(definition.States).sort());
  });

  it('resumes at every step after admit-and-lock', () => {
    const resume = definition.States.ResumeAt!;
    const resumable = new Set((resume.Choices ?? []).map((c) => c.StringEquals));
    const expected = MIGRATION_STEP_IDS.filter((id) => id !== 'admit-and-lock' && id !== 'choose-path');
    expect(expected.filter((id) => !resumable.has(id))).toEqual([]);
    expect(resume.Default).toBe('ChoosePath');
  });

  it('pre-copies after choose-path, on both paths, and every way out of the pre-copy leads on to the path: it never fails a migration', () => {
    // Where the pre-copy starts is the record's answer (choose-path), so a hibernated shoot and a resume skip what is done.
    expect(definition.States.ChoosePath?.Next).toBe('LowerApiRecordTtl');
    // Through the wait for the old API record answers (the good path's), which both ways end at PreCopyFrom.
    expect(definition.States.LowerApiRecordTtl?.Next).toBe('OldApiRecordAnswersExpired?');
    expect(definition.States['OldApiRecordAnswersExpired?']?.Default).toBe('PreCopyFrom');
    expect(definition.States.WaitForOldApiRecordAnswers?.Next).toBe('PreCopyFrom');
    const from = definition.States.PreCopyFrom!;
    expect(from.Choices?.map((c) => [c.Variable, c.StringEquals, c.Next])).toEqual([
      ['$.path.value.preCopyFrom', 'pre-copy-snapshots', 'BeginPreCopy'],
      ['$.path.value.preCopyFrom', 'restore-etcd-ahead', 'RestoreEtcdAhead'],
    ]);
    expect(from.Default).toBe('WhichPath');
    const block = ['BeginPreCopy', 'PreCopySnapshots', 'CompletePreCopy', 'RestoreEtcdAhead', 'EtcdRestoredAhead'];
    expect(block.map((name) => definition.States[name]?.Next)).toEqual([
      'PreCopySnapshots',
      'CompletePreCopy',
      'RestoreEtcdAhead',
      'RefreshAhead?',
      'WhichPath',
    ]);
    for (const name of block) expect(definition.States[name]?.Catch?.map((c) => c.Next)).toEqual(['PreCopyFailed']);
    // The second round (refresh) only improves on the first: whatever happens in it, the first round's answer is recorded.
    const refresh = ['RefreshCopySnapshots', 'RefreshEtcdAhead'];
    expect(refresh.map((name) => definition.States[name]?.Next)).toEqual(['RefreshEtcdAhead', 'EtcdRestoredAhead']);
    for (const name of refresh)
      expect(definition.States[name]?.Catch?.map((c) => [c.Next, c.ResultPath])).toEqual([
        ['EtcdRestoredAhead', '$.refreshError'],
      ]);
    expect(definition.States.PreCopyFailed).toMatchObject({
      Next: 'WhichPath',
      Parameters: { Payload: { action: 'pre-copy-failed', 'ref.$': '$.ref', 'error.$': '$.error' } },
    });
    // Walking from the pre-copy, nothing reaches the migration's failure before the flow is back on its path:
    // only the garden failing to record the pre-copy's own failure (PreCopyFailed's Catch) could.
    const seen = new Set<string>();
    const walk = (name: string) => {
      if (seen.has(name) || name === 'WhichPath' || name === 'PreCopyFailed') return;
      seen.add(name);
      const s = definition.States[name]!;
      for (const next of [
        s.Next,
        s.Default,
        ...(s.Choices ?? []).map((c) => c.Next),
        ...(s.Catch ?? []).map((c) => c.Next),
      ])
        if (next) walk(next);
    };
    walk('PreCopyFrom');
    expect([...seen].sort()).toEqual([...block, ...refresh, 'RefreshAhead?', 'PreCopyFrom'].sort());
  });

  it('refreshes a restore ahead once: a second pre-copy, then the same command with a round of its own, only where the destination restored ahead', () => {
    const choice = definition.States['RefreshAhead?']!;
    expect(choice.Choices).toEqual([
      {
        And: [
          { Variable: '$.etcdAhead.result.etcd.ahead', IsPresent: true },
          { Variable: '$.etcdAhead.result.etcd.ahead', BooleanEquals: true },
        ],
        Next: 'RefreshCopySnapshots',
      },
    ]);
    expect(choice.Default).toBe('EtcdRestoredAhead');
    const copy = definition.States.RefreshCopySnapshots!;
    expect(copy.Resource).toBe(definition.States.PreCopySnapshots?.Resource);
    expect(copy.Parameters?.['Input.$']).toBe('$.preCopyInput.value');
    expect(copy.ResultPath).toBe('$.refreshCopy');
    const again = definition.States.RefreshEtcdAhead!;
    expect(again.Parameters?.Payload).toEqual({
      action: 'dispatch',
      'ref.$': '$.ref',
      step: 'restore-etcd-ahead',
      round: 'refresh',
      'taskToken.$': '$$.Task.Token',
    });
    // Its answer replaces the first round's, so that the step records where the standby got to.
    expect(again.ResultPath).toBe('$.etcdAhead');
    expect(again.HeartbeatSeconds).toBe(3 * RESTORE_AHEAD_HEARTBEAT_SECONDS);
    expect(migrateShootDefinition({ commandTimeout: Duration.minutes(5) }).States).toMatchObject({
      RefreshEtcdAhead: { TimeoutSeconds: 300, HeartbeatSeconds: 30 },
    });
  });

  it('pre-copies through the copy-snapshots state machine in pre-copy mode, bounded in time, and restores ahead without retrying an agent', () => {
    expect(definition.States.BeginPreCopy?.Parameters?.Payload).toEqual({ action: 'begin-pre-copy', 'ref.$': '$.ref' });
    const copy = definition.States.PreCopySnapshots!;
    expect(copy.Resource).toBe(definition.States.CopySnapshots?.Resource);
    expect(copy.Parameters?.['Input.$']).toBe('$.preCopyInput.value');
    expect(copy.TimeoutSeconds).toBe(900);
    const ahead = definition.States.RestoreEtcdAhead!;
    expect(ahead.Parameters?.Payload).toEqual({
      action: 'dispatch',
      'ref.$': '$.ref',
      step: 'restore-etcd-ahead',
      'taskToken.$': '$$.Task.Token',
    });
    // A destination that does not pick the command up is given up after three of its heartbeat intervals.
    expect(ahead.HeartbeatSeconds).toBe(3 * RESTORE_AHEAD_HEARTBEAT_SECONDS);
    expect(migrateShootDefinition({ commandTimeout: Duration.minutes(5) }).States).toMatchObject({
      RestoreEtcdAhead: { TimeoutSeconds: 300, HeartbeatSeconds: 30 },
    });
    expect(
      (ahead.Retry ?? []).flatMap((r) => r.ErrorEquals).filter((e) => e in COMMAND_FAILURES || e.startsWith('States.')),
    ).toEqual([]);
    expect(definition.States.EtcdRestoredAhead?.Parameters?.Payload).toEqual({
      action: 'complete-command',
      'ref.$': '$.ref',
      step: 'restore-etcd-ahead',
      'output.$': '$.etcdAhead',
    });
    // A resume at a pre-copy step goes through choose-path, which reloads the path the flow continues on.
    const resume = definition.States.ResumeAt!.Choices!;
    for (const step of PREPARE_STEPS) expect(resume.find((c) => c.StringEquals === step)?.Next).toBe('ChoosePath');
  });

  it.each(commandStates.map(([name, s]) => ({ name, s })))(
    'command step $name waits for the agent with a timeout',
    ({ s }) => {
      expect(s.TimeoutSeconds).toBeGreaterThan(0);
      expect(s.HeartbeatSeconds).toBeLessThanOrEqual(s.TimeoutSeconds!);
      expect(s.Parameters?.Payload?.['taskToken.$']).toBe('$$.Task.Token');
    },
  );

  it('switches to the bad path from good-path commands, and retries only retryable agent failures on the restore path', () => {
    const good = ['MigrateExtensions', 'DeleteSourceControlPlane'];
    for (const name of good) expect(definition.States[name]?.Catch?.map((c) => c.Next)).toEqual(['SwitchToBadPath']);
    // A lost source lease (mode auto) is caught exactly where the command timeout is: on to the bad path.
    for (const name of good) {
      const timeout = definition.States[name]!.Catch!.find((c) => c.ErrorEquals.includes('States.Timeout'))!;
      expect(timeout.ErrorEquals).toEqual(expect.arrayContaining([...SWITCH_TASK_ERRORS]));
    }
    // Nothing else can fail with it but retire-source, whose lost source skips it: no other state catches it.
    const others = states
      .filter(([name]) => !good.includes(name) && name !== 'RetireSource')
      .flatMap(([, s]) => (s.Catch ?? []).flatMap((c) => c.ErrorEquals));
    expect(others.filter((e) => (SWITCH_TASK_ERRORS as readonly string[]).includes(e))).toEqual([]);
    const retryable = Object.entries(COMMAND_FAILURES)
      .filter(([, f]) => f.retryable)
      .map(([n]) => n)
      .sort();
    for (const name of ['RestoreEtcd', 'RestoreExtensions']) {
      const s = definition.States[name]!;
      const agentRetries = (s.Retry ?? [])
        .flatMap((r) => r.ErrorEquals)
        .filter((e) => e in COMMAND_FAILURES)
        .sort();
      expect(agentRetries).toEqual(retryable);
      expect(s.Catch?.map((c) => c.Next)).toEqual(['RecordFailure']);
    }
  });

  it("lowers the API record's TTL after choose-path whatever happens, waits out the old TTL before the pre-copy, and fences on the good path only once it ran out", () => {
    const lower = definition.States.LowerApiRecordTtl!;
    // The wait lower-api-record-ttl answers (the good path only) comes before the pre-copy, which then is fresh at the fence.
    expect(lower.Next).toBe('OldApiRecordAnswersExpired?');
    const old = definition.States['OldApiRecordAnswersExpired?']!;
    expect(old.Choices).toEqual([
      { Variable: '$.apiRecordTtl.value.waitSeconds', IsPresent: true, Next: 'WaitForOldApiRecordAnswers' },
    ]);
    expect(old.Default).toBe('PreCopyFrom');
    expect(definition.States.WaitForOldApiRecordAnswers).toMatchObject({
      Type: 'Wait',
      SecondsPath: '$.apiRecordTtl.value.waitSeconds',
      Next: 'PreCopyFrom',
    });
    expect(lower.Parameters?.Payload).toEqual({ action: 'lower-api-record-ttl', 'ref.$': '$.ref' });
    // Best effort: every failure goes on to the pre-copy, the migration's own path.
    expect(lower.Catch?.map((c) => [c.Next, c.ResultPath])).toEqual([['PreCopyFrom', '$.apiRecordTtlError']]);
    expect(definition.States.DeleteOwnerRecord?.Next).toBe('ApiRecordAnswersExpired?');
    const expired = definition.States['ApiRecordAnswersExpired?']!;
    expect(expired.Choices).toEqual([
      { Variable: '$.owner.value.waitSeconds', IsPresent: true, Next: 'WaitForApiRecordAnswers' },
    ]);
    expect(expired.Default).toBe('Hibernated?');
    expect(definition.States.WaitForApiRecordAnswers).toMatchObject({
      Type: 'Wait',
      SecondsPath: '$.owner.value.waitSeconds',
      Next: 'DeleteOwnerRecord',
    });
  });

  it('walks the live path in rounds with the owner record moved between them, and leaves it only before the walk began', () => {
    expect(definition.States.WhichPath?.Choices?.map((c) => [c.StringEquals, c.Next])).toEqual([
      ['good', 'MigrateExtensions'],
      ['live', 'MigrateExtensions'],
    ]);
    // After a resume too: the step answers carry the path.
    expect(definition.States.PersistShootState?.Next).toBe('LivePath?');
    expect(definition.States['LivePath?']).toMatchObject({
      Choices: [{ Variable: '$.shootState.value.path', StringEquals: 'live', Next: 'SurveyLive' }],
      Default: 'DeleteOwnerRecord',
    });
    expect(definition.States['AfterOwnerDestination?']).toMatchObject({
      Choices: [{ Variable: '$.owner.value.path', StringEquals: 'live', Next: 'FinishLive' }],
      Default: 'BeginCopy',
    });
    const flow = ['SurveyLive', 'SurveyAnswered', 'OwnLive', 'WalkLive', 'WalkAnswered', 'WayOut?'];
    expect(flow.slice(0, -1).map((name) => definition.States[name]?.Next)).toEqual(flow.slice(1));
    expect(definition.States['WayOut?']).toMatchObject({
      Choices: [
        { Variable: '$.walkRecorded.value.next', StringEquals: 'bad-path', Next: 'SwitchToBadPath' },
        { Variable: '$.walkRecorded.value.next', StringEquals: 'own-source', Next: 'SetOwnerSource' },
      ],
      Default: 'SetOwnerDestination',
    });
    // The destination lost: the owner record back to the source, then the source's round takes the way out,
    // and the migration ends in Error with the shoot where it was (a resume walks afresh).
    const back = ['SetOwnerSource', 'WalkBack', 'WalkBackAnswered', 'WalkedBack', 'RecordFailure'];
    expect(back.slice(0, -1).map((name) => definition.States[name]?.Next)).toEqual(back.slice(1));
    expect(definition.States.SetOwnerSource?.Parameters?.Payload).toEqual({
      action: 'set-owner-source',
      'ref.$': '$.ref',
    });
    expect(definition.States.WalkBack?.Parameters?.Payload).toMatchObject({ step: 'walk-live', round: 'walk-back' });
    expect(definition.States.WalkBackAnswered?.Parameters?.Payload).toMatchObject({
      action: 'complete-command',
      step: 'walk-live',
      'output.$': '$.walkBack',
    });
    expect(definition.States.WalkedBack).toMatchObject({
      Type: 'Pass',
      Parameters: { Error: 'LiveWalkWalkedBack', 'Cause.$': '$.walkBackRecorded.value.message' },
      ResultPath: '$.error',
    });
    expect(definition.States.SetOwnerDestination?.Next).toBe('AfterOwnerDestination?');
    const finish = ['FinishLive', 'FinishAnswered', 'RetireSource', 'SourceRetired', 'RestoreExtensions'];
    expect(finish.slice(0, -1).map((name) => definition.States[name]?.Next)).toEqual(finish.slice(1));
    expect(
      ['SurveyLive', 'WalkLive', 'FinishLive', 'RetireSource'].map(
        (name) => definition.States[name]?.Parameters?.Payload?.step,
      ),
    ).toEqual(['survey-live', 'walk-live', 'finish-live', 'retire-source']);
    expect(definition.States.OwnLive?.Parameters?.Payload).toEqual({ action: 'set-owner-live', 'ref.$': '$.ref' });
    // A survey changes nothing: whatever stops it, the migration goes on as the good path.
    expect(definition.States.SurveyLive?.Catch?.map((c) => c.Next)).toEqual(['LeaveLivePath']);
    expect(definition.States.LeaveLivePath).toMatchObject({
      Next: 'DeleteOwnerRecord',
      ResultPath: '$.path',
      Parameters: { Payload: { action: 'leave-live-path', 'ref.$': '$.ref', 'error.$': '$.error' } },
    });
    // Once the owner record may hold the live value, no snapshot path is safe but the walk's own ways out:
    // a failure ends in Error, resumable, except where a seed may be lost.
    for (const name of [
      'OwnLive',
      'FinishLive',
      'WalkLiveSourceLost',
      'WalkLiveDestinationLost',
      'SetOwnerSource',
      'WalkBack',
      'WalkBackAnswered',
    ])
      expect(definition.States[name]?.Catch?.map((c) => c.Next)).toEqual(['RecordFailure']);
    // A walk round that failed as a lost seed's would: the leases decide, then the way out or the walk again.
    expect(definition.States.WalkLive?.Catch?.map((c) => [c.ErrorEquals, c.Next])[0]).toEqual([
      ['LiveWalkPeerLost', 'States.Timeout', 'States.HeartbeatTimeout', 'DestinationLeaseExpired'],
      'LiveReach',
    ]);
    expect(definition.States.WalkLive?.Catch?.[1]?.Next).toBe('RecordFailure');
    expect(definition.States.LiveReach).toMatchObject({
      Next: 'LiveReach?',
      ResultPath: '$.reach',
      Parameters: { Payload: { action: 'live-reach', 'ref.$': '$.ref', 'error.$': '$.error' } },
    });
    expect(definition.States.LiveReach?.Catch?.map((c) => c.Next)).toEqual(['RecordFailure']);
    expect(definition.States['LiveReach?']).toMatchObject({
      Choices: [
        { Variable: '$.reach.value.next', StringEquals: 'source-lost', Next: 'WalkLiveSourceLost' },
        { Variable: '$.reach.value.next', StringEquals: 'destination-lost', Next: 'WalkLiveDestinationLost' },
      ],
      Default: 'WaitBeforeWalkingAgain',
    });
    expect(definition.States.WalkLiveDestinationLost?.Parameters?.Payload).toMatchObject({
      step: 'walk-live',
      round: 'destination-lost',
    });
    expect(definition.States.WalkLiveDestinationLost?.Next).toBe('WalkAnswered');
    expect(definition.States.WaitBeforeWalkingAgain).toMatchObject({
      SecondsPath: '$.reach.value.waitSeconds',
      Next: 'WalkLive',
    });
    expect(definition.States.WalkLiveSourceLost?.Parameters?.Payload).toMatchObject({
      step: 'walk-live',
      round: 'source-lost',
    });
    expect(definition.States.WalkLiveSourceLost?.Next).toBe('WalkAnswered');
    // A source lost for good answers no retire-source: its own agent deletes what is left when it is back.
    expect(definition.States.RetireSource?.Catch?.map((c) => [c.ErrorEquals, c.Next])).toEqual([
      [['SourceLeaseExpired'], 'SkipRetireSource'],
      [expect.arrayContaining(['RuntimeUnavailable', 'States.Timeout']), 'RecordFailure'],
    ]);
    expect(definition.States.SkipRetireSource).toMatchObject({
      Next: 'RestoreExtensions',
      Parameters: { Payload: { action: 'skip-retire-source', 'ref.$': '$.ref', 'error.$': '$.error' } },
    });
    // A round that ran out of time is taken again: it observes the cluster afresh and goes on from there.
    for (const name of ['WalkLive', 'FinishLive'])
      expect(definition.States[name]?.Retry?.at(-1)?.ErrorEquals).toEqual([
        'States.Timeout',
        'States.HeartbeatTimeout',
      ]);
    // Every round of the walk has the deployment's command timeout, as its command does.
    const rounds = [
      'SurveyLive',
      'WalkLive',
      'WalkLiveSourceLost',
      'WalkLiveDestinationLost',
      'WalkBack',
      'FinishLive',
      'RetireSource',
    ];
    const deployed = migrateShootDefinition({ commandTimeout: Duration.seconds(42) }).States as Record<
      string,
      { TimeoutSeconds?: number; HeartbeatSeconds?: number }
    >;
    expect(rounds.map((name) => [name, deployed[name]?.TimeoutSeconds, deployed[name]?.HeartbeatSeconds])).toEqual(
      rounds.map((name) => [name, 42, 42]),
    );
  });

  it('waits for the destination to serve only in SwitchApiRecord, for a bounded time, then records the failure', () => {
    const waiting = states.filter(([, s]) =>
      (s.Retry ?? []).some((r) => r.ErrorEquals.some((e) => (WAIT_TASK_ERRORS as readonly string[]).includes(e))),
    );
    expect(waiting.map(([name]) => name)).toEqual(['SwitchApiRecord']);
    const s = definition.States.SwitchApiRecord!;
    expect(s.Parameters?.Payload).toEqual({ action: 'switch-api-record', 'ref.$': '$.ref' });
    expect(definition.States.ExtensionsRestored?.Next).toBe('SwitchApiRecord');
    expect(s.Next).toBe('Finalize');
    expect(s.Catch?.find((c) => c.ErrorEquals.includes('DestinationNotServing'))?.Next).toBe('RecordFailure');
  });

  it.each(states.filter(([, s]) => s.Type === 'Task').map(([name, s]) => ({ name, s })))(
    'task $name retries with jitter and never retries a catch-all',
    ({ s }) => {
      expect(s.Retry?.length).toBeGreaterThan(0);
      for (const r of s.Retry ?? []) {
        expect(r.JitterStrategy).toBe('FULL');
        expect(r.ErrorEquals).not.toContain('States.ALL');
      }
    },
  );

  it.each(states.filter(([, s]) => s.Type === 'Task' && s.Catch).map(([name, s]) => ({ name, s })))(
    'task $name catches by name, never States.ALL',
    ({ s }) => {
      const caught = new Set((s.Catch ?? []).flatMap((c) => c.ErrorEquals));
      expect(caught.has('States.ALL')).toBe(false);
      // Whatever a step can fail with by name reaches RecordFailure (or the bad path); only a bug fails the execution.
      const named =
        s.Resource === 'arn:aws:states:::lambda:invoke.waitForTaskToken'
          ? [...Object.keys(COMMAND_FAILURES), 'States.Timeout', 'States.HeartbeatTimeout', ...PERMANENT_TASK_ERRORS]
          : s.Resource?.includes('states:startExecution')
            ? [
                'States.TaskFailed',
                'States.Timeout',
                ...PERMANENT_TASK_ERRORS.filter(
                  (e) =>
                    ![
                      'OwnershipAssertionFailed',
                      'OwnerRecordConflict',
                      'ApiRecordConflict',
                      'NotFound',
                      'Conflict',
                      'Refused',
                    ].includes(e),
                ),
                ...TRANSIENT_TASK_ERRORS.filter(
                  (e) => e !== 'OwnerRecordsUnavailable' && e !== 'ApiRecordsUnavailable',
                ),
              ]
            : [
                'States.Timeout',
                ...PERMANENT_TASK_ERRORS,
                ...TRANSIENT_TASK_ERRORS.filter((e) => e !== 'CopyVerificationFailed'),
              ];
      expect(named.filter((e) => !caught.has(e))).toEqual([]);
      // Throttling is retried, with backoff, before anything catches it.
      const retried = new Set((s.Retry ?? []).flatMap((r) => r.ErrorEquals));
      expect(retried.has('ThrottlingException')).toBe(true);
    },
  );
});
