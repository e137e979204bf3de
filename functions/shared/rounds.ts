import { planProbeRounds, roundTiming } from '../../core/dwd/fan-out.js';
import { logger } from './logger.js';

/**
 * The rounds of one scheduled invocation: EventBridge fires at most once a minute, so a function that
 * must act every few seconds runs `round` at each offset of the minute (at most `rounds` of them),
 * skipping a round whose slot the previous one ran past. Returns how many rounds were planned.
 */
export async function runRounds(
  options: { what: string; intervalSeconds: number; rounds?: number },
  round: (offset: number) => Promise<void>,
): Promise<number> {
  const offsets = planProbeRounds({ intervalSeconds: options.intervalSeconds, windowSeconds: 60 }).slice(
    0,
    options.rounds ?? undefined,
  );
  const started = Date.now();
  for (const offset of offsets) {
    const timing = roundTiming({
      invocationStartMs: started,
      offsetSeconds: offset,
      intervalSeconds: options.intervalSeconds,
      nowMs: Date.now(),
    });
    if (timing.missed) {
      logger.warn(`${options.what} round skipped: the previous one ran past its slot`, { offset });
      continue;
    }
    if (timing.delayMs > 0) await new Promise((r) => setTimeout(r, timing.delayMs));
    await round(offset);
  }
  return offsets.length;
}
