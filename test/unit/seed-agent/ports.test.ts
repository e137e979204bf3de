import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ephemeralLow, freePorts, plannedPorts, portsFree } from '../../../seed/ports.js';

describe('freePorts', () => {
  it('gives distinct ports, each free to bind once it returns', async () => {
    // Act
    const ports = await freePorts(30);
    // Assess
    expect(new Set(ports).size).toBe(30);
    for (const port of ports.slice(0, 3)) {
      const server = createServer();
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('portsFree', () => {
  it('is false while another listener holds one of the ports, true once it let go', async () => {
    // Prepare
    const [held, other] = await freePorts(2);
    const server = createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(held, '127.0.0.1', resolve));
    // Act, Assess
    expect(await portsFree([other!, held!])).toBe(false);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(await portsFree([other!, held!])).toBe(true);
  });
});

describe('plannedPorts', () => {
  it("gives distinct free ports below the kernel's ephemeral range, none of those to avoid", async () => {
    // Prepare: a port to avoid, and one another listener holds, both in a narrow range of 400 ports.
    const low = 21_000;
    const [held] = await plannedPorts(1, { low, high: low + 399 });
    const server = createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(held, '127.0.0.1', resolve));
    const avoid = new Set([low + 1, low + 2]);
    try {
      // Act
      const ports = await plannedPorts(4, { low, high: low + 399, avoid });

      // Assess
      expect(new Set(ports).size).toBe(4);
      for (const port of ports) {
        expect(port).toBeGreaterThanOrEqual(low);
        expect(port).toBeLessThan(Math.min(low + 400, ephemeralLow()));
        expect(avoid.has(port)).toBe(false);
        expect(port).not.toBe(held);
      }
      expect(await portsFree(ports)).toBe(true);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('skips a port that is taken, and one it already chose, and gives up after 50 attempts per port', async () => {
    // Prepare: a random source that offers a held port, then the same port twice, then a free one.
    const low = 22_000;
    const server = createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(low, '127.0.0.1', resolve));
    const offers = [0, 1, 1, 2];
    const random = () => (offers.shift() ?? 0) / 1_000;
    try {
      // Act, Assess: low is held, low + 1 taken once, low + 2 free.
      expect(await plannedPorts(2, { low, high: low + 999, random })).toEqual([low + 1, low + 2]);
      await expect(plannedPorts(1, { low, high: low + 999, random: () => 0 })).rejects.toThrow(
        /no 1 free ports in 22000-22999 after 50 attempts/,
      );
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('never plans a port twice in one process, though it is free again (a fenced etcd left it)', async () => {
    // Prepare: a random source that offers the same port on every call until it is refused.
    const low = 23_000;
    const offers = [5, 5, 5, 6];
    const random = () => (offers.shift() ?? 7) / 1_000;
    // Act
    const first = await plannedPorts(1, { low, high: low + 999, random });
    const second = await plannedPorts(1, { low, high: low + 999, random });
    // Assess: low + 5 is unbound after the first call, and still not handed out again.
    expect(first).toEqual([low + 5]);
    expect(await portsFree(first)).toBe(true);
    expect(second).toEqual([low + 6]);
  });

  it('lets the kernel choose where the range below the ephemeral ports is too small', async () => {
    // Act
    const ports = await plannedPorts(3, { low: 30_000, high: 30_100 });
    // Assess: 101 ports are fewer than 100 per port asked for.
    expect(new Set(ports).size).toBe(3);
    expect(ports.every((port) => port < 30_000 || port > 30_100)).toBe(true);
  });
});

describe('ephemeralLow', () => {
  it('reads the start of ip_local_port_range, and falls back to 32768', () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), 'gl-ports-'));
    writeFileSync(join(dir, 'range'), '40000\t60999\n');
    writeFileSync(join(dir, 'bad'), 'nonsense\n');
    // Act, Assess
    expect(ephemeralLow(join(dir, 'range'))).toBe(40_000);
    expect(ephemeralLow(join(dir, 'bad'))).toBe(32_768);
    expect(ephemeralLow(join(dir, 'missing'))).toBe(32_768);
  });
});
