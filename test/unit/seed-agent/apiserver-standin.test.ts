import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiServerStandIn } from '../../../seed/agent/apiserver-standin.js';
import { ProcessGroup } from '../../../seed/agent/process-group.js';

const started: ApiServerStandIn[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop()));
});

async function standIn(etcd = { up: true }) {
  const s = await ApiServerStandIn.start({ technicalID: 'shoot--dev--api1', etcdAvailable: async () => etcd.up });
  started.push(s);
  return s;
}

const status = (url: string) =>
  fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
    (r) => r.status,
    () => 'unreachable' as const,
  );

describe('kube-apiserver stand-in (loopback)', () => {
  it('answers on both addresses while etcd serves', async () => {
    const s = await standIn();
    expect(await s.probeInternal()).toBe('Success');
    expect(await status(s.externalUrl)).toBe(200);
    expect(s.internalUrl).not.toBe(s.externalUrl);
  });

  it('a broken load balancer fails only the external address', async () => {
    const s = await standIn();
    s.breakExternal();
    expect(await status(s.externalUrl)).toBe('unreachable');
    expect(await s.probeInternal()).toBe('Success');
    s.breakExternal(false);
    expect(await status(s.externalUrl)).toBe(200);
  });

  it('a broken server fails both; the admin endpoint breaks and repairs it', async () => {
    const s = await standIn();
    s.breakInternal();
    expect(await s.probeInternal()).toBe('Failure');
    expect(await status(s.externalUrl)).toBe('unreachable');
    const repaired = await fetch(`${s.internalUrl}/_gardenless/break?address=internal&broken=false`, {
      method: 'POST',
    });
    expect(await repaired.json()).toEqual({ internal: false, external: false });
    expect(await s.probeInternal()).toBe('Success');
  });

  it('is unhealthy while etcd does not serve', async () => {
    const etcd = { up: false };
    const s = await standIn(etcd);
    expect(await s.probeInternal()).toBe('Failure');
    expect(await status(s.externalUrl)).toBe(500);
    etcd.up = true;
    expect(await s.probeInternal()).toBe('Success');
  });
});

describe('ProcessGroup', () => {
  it('stops the leader and the children it left behind', async () => {
    // Prepare: a leader that starts a grandchild and ignores SIGTERM, as a wedged sidecar would.
    const group = ProcessGroup.start('sh', ['-c', 'trap "" TERM; sleep 60 & echo $!; wait'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const child = Number(
      await new Promise<string>((resolve) =>
        group.child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())),
      ),
    );

    // Act
    await group.stop({ timeoutMs: 300 });

    // Assess
    expect(group.running).toBe(false);
    await new Promise((r) => setTimeout(r, 100));
    // Gone, or a zombie waiting for init to reap it (this container's init may not): either way not running.
    expect(processState(child)).toMatch(/^(gone|Z)$/);
  });
});

function processState(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.charAt(0);
  } catch {
    return 'gone';
  }
}
