import { describe, expect, it } from 'vitest';
import { renderDoctor } from '../../../daemon/cli/commands/doctor.js';

const NOW = Date.parse('2026-12-02T04:00:00Z');

describe('handoff doctor, for a person', () => {
  it("says when an agent's telemetry was last seen in relative time, as status does, never as an ISO stamp", () => {
    const claude = {
      agent: 'claude' as const,
      config: '/home/me/.claude/settings.json',
      installed: true,
      live: true,
      hooks: [],
      missing: [],
      step: null,
      telemetry: { sources: ['claude-statusline' as const], last_seen: '2026-12-02T03:58:30.120Z' },
    };
    const codex = {
      ...claude,
      agent: 'codex' as const,
      config: '/home/me/.codex/hooks.json',
      installed: false,
      live: false,
      telemetry: { sources: ['codex-rollout' as const], last_seen: null },
    };
    const wayOut = 'way out: BLOCKED — origin does not answer; fix before 90 %';
    const text = renderDoctor({ agents: [claude, codex], daemon: true, way_out: null, way_out_line: wayOut }, 'agents_live', { nowMs: NOW, columns: 80 });
    expect(text.split('\n')).toEqual([
      'claude: live (/home/me/.claude/settings.json)',
      '  telemetry (claude-statusline): last seen 2 min ago',
      'codex: not installed (/home/me/.codex/hooks.json)',
      '  telemetry (codex-rollout): never seen',
      wayOut,
    ]);
  });
});
