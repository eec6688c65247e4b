import type { Scene } from './scene.js';
import { until } from '../../support/daemon.js';

export interface Reading {
  readonly source: string;
  readonly metric: string;
  readonly used_percent: number;
  readonly resets_at: number | null;
  readonly executor: string | null;
}

/** Waits until the daemon holds a reading of each metric named (from the source named), and returns them. */
export async function readingsOf(scene: Scene, source: string, metrics: readonly string[], timeoutMs = 60_000): Promise<Record<string, Reading>> {
  return until(
    `${source} readings of ${metrics.join(', ')}`,
    async () => {
      const readings = ((await scene.status())['readings'] ?? []) as Reading[];
      const found = Object.fromEntries(readings.filter((r) => r.source === source).map((r) => [r.metric, r]));
      return metrics.every((m) => m in found) ? found : undefined;
    },
    timeoutMs,
  );
}

/** Epoch seconds a whole number of minutes from now: agents drop resets that lie in the past or over a year ahead. */
export const resetIn = (minutes: number) => Math.floor(Date.now() / 1000 / 60) * 60 + minutes * 60;

export const iso = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();
