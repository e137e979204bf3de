import { createServer, connect, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Etcd3 } from 'etcd3';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../seed/ports.js';
import { PublicGate, replayEvents, type DeltaEvent } from '../../seed/backup-restore/index.js';
import { cleanup, startedEtcd, until } from './backup-restore-support.js';

/**
 * The single etcd's public address, owned by the sidecar's gate: bytes forwarded both ways while open,
 * connections refused and cut while closed; and the supervisor that serves and fences a real etcd by
 * opening and closing it, restarting etcd only to change its request limits.
 */

afterAll(cleanup);

describe('PublicGate', () => {
  it('forwards both ways while open; closing refuses new connections and cuts the open ones; it opens again on the same port', async () => {
    // Prepare: an echo server (the "etcd") and a gate in front of it.
    const echo = await listening(createServer((s) => s.pipe(s)));
    const targetPort = (echo.address() as { port: number }).port;
    const port = await freePort();
    const gate = new PublicGate({ host: '127.0.0.1', port, targetPort });
    try {
      // Act 1 / Assess 1: closed before it opens: refused.
      expect(await connectOutcome(port)).toBe('ECONNREFUSED');

      // Act 2: open (twice: a no-op) and talk through it.
      await gate.open();
      await gate.open();
      const client = await connected(port);
      const reply = await roundTrip(client, 'hello etcd');
      const cut = new Promise<void>((resolve) => client.once('close', () => resolve()));

      // Assess 2: the bytes came back through the gate.
      expect(gate.isOpen).toBe(true);
      expect(reply).toBe('hello etcd');

      // Act 3: close while the client is connected.
      await gate.close();

      // Assess 3: the open connection was cut, a new one is refused.
      await cut;
      expect(gate.isOpen).toBe(false);
      expect(await connectOutcome(port)).toBe('ECONNREFUSED');

      // Act 4 / Assess 4: open again on the same port.
      await gate.open();
      const again = await connected(port);
      expect(await roundTrip(again, 'again')).toBe('again');
      again.destroy();
    } finally {
      await gate.close();
      await new Promise((resolve) => echo.close(resolve));
    }
  });

  it('holds: a connection is taken and answered only once the gate opens; holding cuts what it forwarded; a close cuts what it holds', async () => {
    // Prepare: an echo server and a gate that holds from the start.
    const echo = await listening(createServer((s) => s.pipe(s)));
    const port = await freePort();
    const gate = new PublicGate({ host: '127.0.0.1', port, targetPort: (echo.address() as { port: number }).port });
    try {
      await gate.hold();
      const early = await connected(port);
      const earlyReply = roundTrip(early, 'sent while held');
      const answeredWhileHeld = await Promise.race([earlyReply.then(() => true), sleep(300).then(() => false)]);

      // Act 1: open.
      await gate.open();

      // Assess 1: nothing came back while held; the held connection is forwarded, with what it sent meanwhile.
      expect(answeredWhileHeld).toBe(false);
      expect(await earlyReply).toBe('sent while held');
      expect(gate.state).toBe('open');

      // Act 2: hold again.
      const cut = new Promise<void>((resolve) => early.once('close', () => resolve()));
      await gate.hold();

      // Assess 2: the forwarded connection was cut; a new one is taken and held.
      await cut;
      const held = await connected(port);
      const heldClosed = new Promise<void>((resolve) => held.once('close', () => resolve()));

      // Act 3 / Assess 3: a close cuts the held connection and refuses new ones.
      await gate.close();
      await heldClosed;
      expect(await connectOutcome(port)).toBe('ECONNREFUSED');
    } finally {
      await gate.close();
      await new Promise((resolve) => echo.close(resolve));
    }
  });

  it('cuts the client when the target refuses (etcd gone while the gate stays open)', async () => {
    const port = await freePort();
    const gate = new PublicGate({ host: '127.0.0.1', port, targetPort: await freePort() });
    await gate.open();
    try {
      const client = await connected(port);
      await new Promise<void>((resolve) => client.once('close', () => resolve()));
      expect(client.destroyed).toBe(true);
    } finally {
      await gate.close();
    }
  });
});

describe('EtcdSupervisor of a single member: the gate serves and fences, etcd restarts only for its limits', () => {
  it("fences and serves again without restarting etcd; a client on the public address keeps etcd's default limits; a replay raises them and serving lowers them again", async () => {
    // Prepare: one etcd serving on the public address.
    const { supervisor, endpoint, client } = await startedEtcd('gate', 'public');
    try {
      await client.put('a').value('1');
      const pid = supervisor.pid;
      // One transaction of 200 puts: more than etcd's default of 128 operations.
      const twoHundredOps = () =>
        client
          .if('a', 'Value', '==', '1')
          .then(...Array.from({ length: 200 }, (_, i) => client.put(`big/${i}`).value('x')))
          .commit();

      // Act 1: fence, then serve again.
      const timing = await supervisor.fence();
      const fencedPublic = await healthOutcome(endpoint);
      const fencedPrivate = await healthOutcome(supervisor.clientUrl('private'));
      const fencedPid = supervisor.pid;
      await supervisor.unfence();

      // Assess 1: the same etcd process throughout; refused publicly while fenced, serving privately.
      expect(timing?.by).toBe('stop');
      expect(fencedPublic).toBe('refused');
      expect(fencedPrivate).toBe('answered');
      expect(fencedPid).toBe(pid);
      expect(supervisor.pid).toBe(pid);
      expect(supervisor.address).toBe('public');
      expect(await client.get('a').string()).toBe('1');

      // Act 2: a client's transaction of 200 operations on the public address.
      const big = twoHundredOps();

      // Assess 2: refused by etcd's default limit of 128 operations.
      await expect(big).rejects.toThrow(/too many operations/);

      // Act 3: fenced, a replay of one revision of 300 events (a prefix delete's size), then serving again.
      await supervisor.fence();
      const target = supervisor.replayTarget();
      const revision = Number((await target.client.kv.range({ key: Buffer.from('a') })).header.revision);
      const events: DeltaEvent[] = Array.from({ length: 300 }, (_, i) => ({
        type: 'put',
        key: Buffer.from(`r/${i}`).toString('base64'),
        value: Buffer.from('v').toString('base64'),
        revision: revision + 1,
      }));
      const replayed = await replayEvents({ target, events, fromRevision: revision }).finally(() => target.close());
      const replayPid = supervisor.pid;
      const raised = supervisor.replayLimits;
      await supervisor.unfence();

      // Assess 3: etcd restarted with raised limits for the replay, then with its defaults to serve; the revision landed whole.
      expect(replayed).toEqual({ transactions: 1, skippedEvents: 0, revision: revision + 1 });
      expect(raised).toBe(true);
      expect(replayPid).not.toBe(pid);
      expect(supervisor.replayLimits).toBe(false);
      expect(supervisor.pid).not.toBe(replayPid);
      expect((await client.getAll().prefix('r/').keys()).length).toBe(300);
      await expect(twoHundredOps()).rejects.toThrow(/too many operations/);

      // Act 4 / Assess 4: a replay while serving is refused before anything restarts.
      const serving = supervisor.replayTarget();
      const servingPid = supervisor.pid;
      await expect(
        replayEvents({
          target: serving,
          events: events.map((e) => ({ ...e, revision: revision + 2 })),
          fromRevision: revision + 1,
        }).finally(() => serving.close()),
      ).rejects.toThrow(/not on its private address/);
      expect(supervisor.pid).toBe(servingPid);
      expect(supervisor.address).toBe('public');
    } finally {
      client.close();
      await supervisor.stop();
    }
  }, 60_000);

  it('restarts an etcd that died while serving and serves it again through the gate, which stayed open', async () => {
    const { supervisor, client } = await startedEtcd('gate-crash', 'public');
    try {
      await client.put('before').value('1');
      const pid = supervisor.pid!;

      process.kill(pid, 'SIGKILL');
      await until(
        'etcd restarted and served again',
        () => supervisor.pid !== undefined && supervisor.pid !== pid && supervisor.address === 'public',
        { timeoutMs: 15_000 },
      );

      expect(supervisor.pid).not.toBe(pid);
      expect(supervisor.address).toBe('public');
      expect(supervisor.replayLimits).toBe(false);
      await client.put('after').value('2');
      expect(await client.get('before').string()).toBe('1');
    } finally {
      client.close();
      await supervisor.stop();
    }
  }, 60_000);

  it('lowerLimits restarts an etcd that replayed with raised limits while it stays fenced, so serving restarts nothing', async () => {
    const { supervisor, client: privateClient } = await startedEtcd('gate-lower', 'private');
    const endpoint = supervisor.clientUrl('public');
    const client = new Etcd3({ hosts: endpoint });
    try {
      const target = supervisor.replayTarget();
      const events: DeltaEvent[] = Array.from({ length: 200 }, (_, i) => ({
        type: 'put',
        key: Buffer.from(`k/${i}`).toString('base64'),
        value: 'eA==',
        revision: 2,
      }));
      await replayEvents({ target, events, fromRevision: 1 }).finally(() => target.close());
      expect(supervisor.replayLimits).toBe(true);

      await supervisor.lowerLimits();
      const lowered = supervisor.pid;
      expect(supervisor.replayLimits).toBe(false);
      expect(supervisor.address).toBe('private');
      expect(await healthOutcome(endpoint)).toBe('refused');

      // A no-op at the defaults.
      await supervisor.lowerLimits();
      expect(supervisor.pid).toBe(lowered);

      // Too many bytes for etcd (1.8 MB in one put) and for its gRPC limit (3 MB in one revision): raised each time, from the defaults.
      let revision = 2;
      for (const sizes of [[1_800_000], [1_500_000, 1_500_000]]) {
        await supervisor.lowerLimits();
        revision += 1;
        const large = supervisor.replayTarget();
        const big: DeltaEvent[] = sizes.map((n, i) => ({
          type: 'put',
          key: Buffer.from(`large/${revision}/${i}`).toString('base64'),
          value: Buffer.alloc(n, 'v').toString('base64'),
          revision,
        }));
        expect(
          await replayEvents({ target: large, events: big, fromRevision: revision - 1 }).finally(() => large.close()),
        ).toMatchObject({ transactions: 1, revision });
        expect(supervisor.replayLimits).toBe(true);
      }

      await supervisor.lowerLimits();
      const servingPid = supervisor.pid;
      await supervisor.unfence();
      expect(supervisor.pid).toBe(servingPid);
      expect(servingPid).not.toBe(lowered);
      expect((await client.getAll().prefix('k/').keys()).length).toBe(200);
      expect((await client.get('large/4/1').buffer())?.length).toBe(1_500_000);
    } finally {
      client.close();
      privateClient.close();
      await supervisor.stop();
    }
  }, 60_000);
});

async function listening(server: Server): Promise<Server> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function connected(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

async function connectOutcome(port: number): Promise<string> {
  return connected(port).then(
    (socket) => {
      socket.destroy();
      return 'connected';
    },
    (error: NodeJS.ErrnoException) => error.code ?? String(error),
  );
}

function roundTrip(socket: Socket, text: string): Promise<string> {
  return new Promise((resolve) => {
    socket.once('data', (data) => resolve(data.toString()));
    socket.write(text);
  });
}

async function healthOutcome(url: string): Promise<'answered' | 'refused'> {
  return fetch(`${url}/health`).then(
    () => 'answered' as const,
    () => 'refused' as const,
  );
}
