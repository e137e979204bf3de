import { deployGarden, type Deployment } from '../local/deploy.js';
import { startEmulator } from '../local/emulator.js';
import { readEndpoints } from '../local/landscape-file.js';

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The running local landscape, or a fresh emulator with the stack deployed (stopped by `close`). */
export async function benchLandscape(): Promise<{ deployment: Pick<Deployment, 'apiUrl' | 'awsEndpoint' | 'region' | 'outputs'>; close: () => Promise<void> }> {
  const running = readEndpoints();
  if (running) {
    try {
      const res = await fetch(`${running.awsEndpoint}/_localstack/health`, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) return { deployment: running, close: async () => {} };
    } catch {
      // A stale endpoints file: fall through and start a private emulator.
    }
  }
  const emulator = await startEmulator({ logFile: `.landscape/bench-emulator-${process.pid}.log` });
  // Benchmarks drive the watchdog themselves; a scheduled round would run beside them.
  const deployment = await deployGarden({ endpoint: emulator.endpoint, stackName: 'GardenBench', context: { watchdogSchedule: 'false' } });
  return { deployment, close: () => emulator.stop() };
}
