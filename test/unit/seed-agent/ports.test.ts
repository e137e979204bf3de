import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePorts } from '../../../seed/ports.js';

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
