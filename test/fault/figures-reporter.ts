import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { STATES } from '../../protocol/index.js';
import { attribute, edgeKey, machineEdges } from './support/coverage.js';
import type { Figures } from './support/figures.js';

interface Saved {
  readonly suite: string;
  readonly figures: Figures;
  readonly seconds: number;
  readonly transitions: Record<string, number>;
}

const n = (value: number) => value.toLocaleString('en-US');
const pad = (text: string, width: number) => text.padEnd(width);

/**
 * Prints one figure line per fault suite (runs, kills, requests, failures) and the coverage table of
 * every state and transition of the workspace machine, as seen in the journals the suites produced.
 */
export default class FiguresReporter implements Reporter {
  onTestRunEnd(testModules: readonly TestModule[]): void {
    // One run may hold both projects (`npm run check`): only the fault suites have figures.
    const faultModules = testModules.filter((module) => module.moduleId.endsWith('.fault.ts'));
    const dir = process.env['HANDOFF_FAULT_FIGURES'];
    if (dir === undefined || faultModules.length === 0) return;
    const saved: Saved[] = (existsSync(dir) ? readdirSync(dir) : [])
      .filter((name) => name.endsWith('.json'))
      .map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as Saved);
    const failedBySuite = new Map<string, number>();
    for (const module of faultModules) {
      const suite = basename(module.moduleId).replace(/\.fault\.ts$/, '');
      let failed = 0;
      for (const test of module.children.allTests()) if (test.result().state === 'failed') failed += 1;
      if (module.state() === 'failed' && failed === 0) failed = 1;
      failedBySuite.set(suite, failed);
    }
    const out: string[] = ['', 'fault figures'];
    const suites = [...new Set([...failedBySuite.keys(), ...saved.map((s) => s.suite)])].sort();
    for (const suite of suites) {
      const mine = saved.filter((s) => s.suite === suite);
      const total = { runs: 0, kills: 0, requests: 0, failures: 0, extra: {} as Record<string, number>, seconds: 0 };
      for (const s of mine) {
        total.runs += s.figures.runs;
        total.kills += s.figures.kills;
        total.requests += s.figures.requests;
        total.failures += s.figures.failures;
        total.seconds = Math.max(total.seconds, s.seconds);
        for (const [k, v] of Object.entries(s.figures.extra)) total.extra[k] = (total.extra[k] ?? 0) + v;
      }
      const failures = total.failures + (failedBySuite.get(suite) ?? 0);
      const extra = Object.entries(total.extra)
        .map(([k, v]) => `${k}=${n(v)}`)
        .join(' ');
      out.push(
        `  ${pad(suite, 14)} runs=${pad(n(total.runs), 7)} kills=${pad(n(total.kills), 5)} requests=${pad(n(total.requests), 8)} failures=${pad(String(failures), 3)} ${total.seconds.toFixed(1)} s${extra === '' ? '' : `  (${extra})`}`,
      );
    }
    out.push(...coverageTable(saved));
    process.stdout.write(`${out.join('\n')}\n`);
  }
}

function coverageTable(saved: readonly Saved[]): string[] {
  const edges = machineEdges();
  const suites = [...new Set(saved.map((s) => s.suite))].sort();
  const perSuite = new Map(
    suites.map((suite) => {
      const observed = new Map<string, number>();
      for (const s of saved.filter((x) => x.suite === suite)) for (const [k, v] of Object.entries(s.transitions)) observed.set(k, (observed.get(k) ?? 0) + v);
      return [suite, attribute(observed, edges)] as const;
    }),
  );
  const width = Math.max(8, ...suites.map((s) => s.length + 1));
  const header = `  ${pad('from', 21)} ${pad('event', 18)} ${pad('to', 21)} ${suites.map((s) => pad(s, width)).join('')}total`;
  const lines = ['', 'coverage: states and transitions of protocol/workspace-machine.ts in the fault suites’ journals', header];
  const missing: string[] = [];
  for (const edge of edges) {
    const counts = suites.map((s) => perSuite.get(s)?.edges.get(edgeKey(edge)) ?? 0);
    const total = counts.reduce((a, b) => a + b, 0);
    if (total === 0) missing.push(`${edge.from} —${edge.event}→ ${edge.to}`);
    lines.push(
      `  ${pad(edge.from, 21)} ${pad(edge.event, 18)} ${pad(edge.to, 21)} ${counts.map((c) => pad(n(c), width)).join('')}${total === 0 ? 'NOT EXERCISED' : n(total)}`,
    );
  }
  const visits = STATES.map((state) => {
    const total = suites.reduce((sum, s) => sum + (perSuite.get(s)?.visits.get(state) ?? 0), 0);
    if (total === 0) missing.push(`state ${state}`);
    return `${state} ${n(total)}`;
  });
  lines.push(`  records per state: ${visits.join(' · ')}`);
  const unexplained = suites.flatMap((s) =>
    [...(perSuite.get(s)?.unexplained ?? new Map<string, number>())].map(([k, v]) => `${s}: ${k.replaceAll('|', ' ')} ×${v}`),
  );
  if (unexplained.length > 0) lines.push(`  UNEXPLAINED changes of state (no machine transition leads there): ${unexplained.join('; ')}`);
  lines.push(missing.length === 0 ? '  every state and transition exercised' : `  not exercised: ${missing.join('; ')}`);
  return lines;
}
