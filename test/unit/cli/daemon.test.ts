import { afterEach, describe, expect, it } from 'vitest';
import { untilSignalled } from '../../../cli/daemon.js';

const listeners = () => ({ SIGTERM: process.listenerCount('SIGTERM'), SIGINT: process.listenerCount('SIGINT') });

describe('untilSignalled', () => {
  const before = listeners();
  afterEach(() => expect(listeners()).toEqual(before));

  it.each(['SIGTERM', 'SIGINT'] as const)('stops once on %s, then resolves and leaves no listener', async (signal) => {
    // Prepare
    const log: Record<string, unknown>[] = [];
    let stops = 0;
    let stopped = false;
    const done = untilSignalled(
      async () => {
        stops += 1;
        await new Promise((r) => setTimeout(r, 20));
        stopped = true;
      },
      (e) => log.push(e),
    );
    expect(listeners()).toEqual({ SIGTERM: before.SIGTERM + 1, SIGINT: before.SIGINT + 1 });

    // Act: the signal, and the other one while the stop runs (it must not start a second stop).
    process.emit(signal, signal);
    process.emit(signal === 'SIGTERM' ? 'SIGINT' : 'SIGTERM', signal === 'SIGTERM' ? 'SIGINT' : 'SIGTERM');
    await done;

    // Assess
    expect(stopped).toBe(true);
    expect(stops).toBe(1);
    expect(log).toEqual([{ event: 'shutdown', signal }]);
  });

  it('logs a stop that fails and still resolves', async () => {
    const log: Record<string, unknown>[] = [];
    const done = untilSignalled(
      async () => {
        throw new Error('etcd would not stop');
      },
      (e) => log.push(e),
    );

    process.emit('SIGTERM', 'SIGTERM');
    await done;

    expect(log).toEqual([
      { event: 'shutdown', signal: 'SIGTERM' },
      { event: 'shutdown-failed', error: 'Error: etcd would not stop' },
    ]);
  });
});
