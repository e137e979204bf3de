import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePorts, portsFree } from '../../../seed/ports.js';

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
