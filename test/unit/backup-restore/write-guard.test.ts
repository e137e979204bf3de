import { describe, expect, it } from 'vitest';
import { WriteGuard, type WriteGuardEvent, type WriteSwitch } from '../../../seed/backup-restore/write-guard.js';

/** A guard on a fake clock, snapshotter and switch: what it does at each decision. */
function setup(initial: { refusing?: boolean; failing?: boolean } = {}) {
  let now = 0;
  const snapshotter = {
    running: true,
    oldestPendingAt: undefined as number | undefined,
    retries: 0,
    retryDelta: () => void (snapshotter.retries += 1),
  };
  const etcd = { refusing: initial.refusing ?? false, failing: initial.failing ?? false, calls: [] as string[] };
  const act = async (name: string, fn: () => void) => {
    etcd.calls.push(name);
    if (etcd.failing) throw new Error('etcd unreachable');
    fn();
  };
  const writes: WriteSwitch = {
    refusing: async () => {
      etcd.calls.push('refusing?');
      if (etcd.failing) throw new Error('etcd unreachable');
      return etcd.refusing;
    },
    refuse: () => act('refuse', () => void (etcd.refusing = true)),
    accept: () => act('accept', () => void (etcd.refusing = false)),
  };
  const events: WriteGuardEvent[] = [];
  const guard = new WriteGuard({
    limit: 2_000,
    snapshotter,
    endpoint: () => 'http://etcd',
    writes,
    now: () => now,
    retryInterval: 1_000,
    onEvent: (e) => events.push(e),
  });
  return { guard, snapshotter, etcd, events, at: (t: number) => void (now = t) };
}

describe('WriteGuard', () => {
  it('refuses writes once the oldest unuploaded write is older than the limit, retries uploads meanwhile, and resumes by itself', async () => {
    const { guard, snapshotter, etcd, events, at } = setup();
    snapshotter.oldestPendingAt = 1_000;
    at(3_000);
    await guard.check();
    expect(etcd.refusing).toBe(false);

    at(3_050);
    await guard.check();
    expect(etcd.refusing).toBe(true);
    expect(events).toContainEqual({ type: 'write-stall', lagMs: 2_050, limitMs: 2_000, reactionMs: 50 });
    expect(guard.status()).toMatchObject({ stalled: true, stalls: 1, lastReactionMs: 50 });
    expect(snapshotter.retries).toBe(1);

    at(3_500);
    await guard.check();
    expect(snapshotter.retries).toBe(1);
    at(4_100);
    await guard.check();
    expect(snapshotter.retries).toBe(2);

    // An upload succeeded: nothing pending.
    snapshotter.oldestPendingAt = undefined;
    at(4_200);
    await guard.check();
    expect(etcd.refusing).toBe(false);
    expect(events.at(-1)).toEqual({ type: 'write-resume', stalledMs: 1_150 });
    expect(guard.status()).toMatchObject({ stalled: false, stalledSince: null, stalls: 1 });
  });

  it('does nothing while its snapshotter does not run, and reads what etcd does when it runs again', async () => {
    // An alarm carried over (an earlier stall, another member, a restored snapshot) with nothing pending: cleared.
    const { guard, snapshotter, etcd, at } = setup({ refusing: true });
    snapshotter.running = false;
    snapshotter.oldestPendingAt = 0;
    at(10_000);
    await guard.check();
    expect(etcd.calls).toEqual([]);

    snapshotter.running = true;
    snapshotter.oldestPendingAt = undefined;
    await guard.check();
    expect(etcd.calls).toEqual(['refusing?', 'accept']);
    expect(etcd.refusing).toBe(false);
  });

  it('keeps trying when etcd does not answer, and reports it', async () => {
    const { guard, snapshotter, etcd, at } = setup({ failing: true });
    snapshotter.oldestPendingAt = 0;
    at(5_000);
    await guard.check();
    expect(guard.status()).toMatchObject({ stalled: false, lastError: 'sync: etcd unreachable' });
    etcd.failing = false;
    await guard.check();
    expect(etcd.refusing).toBe(true);
    expect(guard.status()).toMatchObject({ stalled: true, lastError: null });
  });
});
