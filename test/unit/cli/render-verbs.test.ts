import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { emit, type Output } from '../../../daemon/cli/output.js';
import { buildProgram } from '../../../daemon/cli/program.js';
import { RENDERERS, type Renderer, type View } from '../../../daemon/cli/render/index.js';
import { renderOverview } from '../../../daemon/cli/render/overview.js';
import { CODES, isSuccess, statusView, success, type Code } from '../../../protocol/index.js';
import { Harness } from '../protocol/machine-harness.js';

const VIEW: View = { nowMs: Date.parse('2026-12-02T01:00:00Z'), columns: 80 };
const CYCLE = '20261202T005000Z-k3f9qa';
const WS = '/work/repo';
const moved = { workspace: WS, state: 'NORMAL', changed: true, note: null };
const record = (at: number, summary: Record<string, string | number | boolean | null> = {}) => ({ at: new Date(at).toISOString(), sha256: null, summary });

/** A real status view at HANDOFF_READY, built by the pure machine as the daemon builds it. */
function ready() {
  const h = new Harness();
  h.send({ type: 'NOW', reason: 'battery', wait: false });
  h.send({ type: 'DRAIN_WAITED', why: 'no_wait' });
  h.send({ type: 'DRAIN_STEP_DONE', step: 'inspect', record: record(h.at, { dirty: 3, branch: 'main' }) });
  h.send({ type: 'DRAIN_STEP_DONE', step: 'validate', record: record(h.at, { status: 'not_run' }) });
  h.send({ type: 'DRAIN_STEP_DONE', step: 'snapshot', record: record(h.at, { scanned: 3, withheld: 0, commit: 'a'.repeat(40) }) });
  h.send({ type: 'DRAIN_STEP_DONE', step: 'package', record: record(h.at, { manifest: 'manifest.json', handoff: 'HANDOFF.md' }) });
  h.send({ type: 'DRAIN_STEP_DONE', step: 'publish', record: record(h.at, { mechanism: 'handoff_branch', remote: 'origin' }) });
  h.advance(2);
  h.send({ type: 'DRAIN_STEP_DONE', step: 'offer', record: record(h.at) });
  h.send({
    type: 'CHECKPOINT_VERIFIED',
    checkpoint: { mechanism: 'handoff_branch', ref: 'refs/heads/handoff/x', commit: 'a'.repeat(40), verified: true },
    remote: null,
  });
  return statusView(h.snapshot, h.at);
}

const checks = [{ name: 'integrity', status: 'ok', expected: null, observed: null, detail: 'manifest and HANDOFF.md match' }];
const verdict = { checks, cycle: CYCLE, leg: 'out', workspace: WS, from: null, manifest: `${WS}/.session-handoff/${CYCLE}/manifest.json` };

/** Each verb's success answers, one per code it can answer with, with the data the daemon sends. */
const SAMPLES: { readonly [V in keyof typeof RENDERERS]: readonly (readonly [Code, unknown])[] } = {
  prepare: [['prepare_entered', { ...moved, state: 'PREPARE' }]],
  now: [
    ['handoff_ready', ready()],
    ['status', { ...ready(), state: 'NORMAL' }],
  ],
  drained: [['ok', { ...moved, state: 'EVACUATE' }]],
  cancel: [['cancelled', { ...moved, cycle: CYCLE }]],
  check: [
    ['check_clear', ready()],
    ['resume_needed', ready()],
    ['cycle_completed', ready()],
  ],
  resume: [['handoff_ready', ready()]],
  return: [['handoff_ready', ready()]],
  close: [['ok', { ...moved, state: 'CLOSED' }]],
  verify: [
    ['verified', verdict],
    ['verified', { ...verdict, workspace: null, from: 'origin', manifest: `refs/handoff/packages/${CYCLE}:${CYCLE}/manifest.json` }],
  ],
  accept: [
    ['accepted', { ...verdict, token: 4, state: 'TAKEOVER', executor: 'laptop' }],
    ['accepted', { ...verdict, leg: 'return', token: 5, state: 'CLOSED', executor: 'desk' }],
  ],
  list: [
    ['cycles', { cycles: [], total: 0 }],
    ['cycles', { cycles: [{ cycle: CYCLE, workspace: WS, state: 'HANDOFF_READY', revisions: 1, integrity: 'ok', abandoned: false }], total: 1 }],
  ],
  show: [
    [
      'cycle',
      {
        cycle: CYCLE,
        workspace: WS,
        state: 'HANDOFF_READY',
        revisions: [
          {
            path: `${WS}/.session-handoff/${CYCLE}/manifest.json`,
            leg: 'out',
            revision: 1,
            integrity: 'ok',
            problem: null,
            current: true,
            created_at: '2026-12-02T00:50:01Z',
            checkpoint: { mechanism: 'handoff_branch', ref: `refs/heads/handoff/${CYCLE}`, commit: 'b'.repeat(40), remote: 'origin', remote_verified: true },
          },
        ],
        abandoned: [],
        status: ready(),
      },
    ],
  ],
  'lease show': [['lease_shown', { workspace: WS, checkout: WS, state: 'NORMAL', cycle: null, holder: null, last_token: 0, offered: false, last_break: null }]],
  'lease acquire': [['lease_acquired', { ...moved, token: 7, remote: null }]],
  'lease renew': [['lease_renewed', moved]],
  'lease release': [['lease_released', moved]],
  'lease break': [['lease_broken', { ...moved, last_break: { at: '2026-12-02T00:59:00Z', reason: 'gone', executor: 'laptop', token: 3 } }]],
  pause: [['paused', { scope: 'workspace', workspace: WS, reason: 'lunch', since: '2026-12-02T00:59:00Z', path: `${WS}/.session-handoff/PAUSE` }]],
  unpause: [['unpaused', { scope: 'global', workspace: null, path: '/state/PAUSE' }]],
  signal: [
    ['reading_recorded', { ...moved, key: 'claude-statusline/context/-', durable: false }],
    ['reading_not_credible', { ...moved, note: 'context percent is unknown; nothing changed' }],
    ['warning_recorded', moved],
  ],
  'daemon stop': [['daemon_stopping', { pid: 42 }]],
  'capsule set': [['capsule_saved', { ...moved, sha256: 'c'.repeat(64), capsule: {} }]],
  'capsule show': [
    ['capsule_shown', { workspace: WS, capsule: null, sha256: null, error: null }],
    ['capsule_shown', { workspace: WS, capsule: null, sha256: null, error: 'capsule.next_action is required' }],
  ],
  prune: [
    ['ok', { repo: WS, remote: null, dry_run: false, kept_unfinished: [CYCLE], kept_foreign: [CYCLE], cycles: [] }],
    [
      'ok',
      {
        repo: WS,
        remote: 'origin',
        dry_run: true,
        kept_unfinished: [],
        kept_foreign: [],
        cycles: [
          {
            cycle: CYCLE,
            local: [
              { ref: `refs/heads/handoff/${CYCLE}`, fate: 'would_remove' },
              { ref: `refs/heads/handoff/${CYCLE}-return`, fate: 'kept_checked_out' },
            ],
            remote: [
              { ref: `refs/handoff/lease/${CYCLE}`, fate: 'would_remove' },
              { ref: `refs/heads/handoff/${CYCLE}`, fate: 'kept_look_alike', why: `the remote also holds refs/tags/refs/heads/handoff/${CYCLE}` },
            ],
          },
        ],
      },
    ],
  ],
};

const SUCCESS_CODES = (Object.keys(CODES) as Code[]).filter((code) => isSuccess(code));

function printed(render: Renderer, code: Code, data: unknown): string {
  const lines: string[] = [];
  const output: Output = { json: false, out: (t) => lines.push(t), err: (t) => lines.push(`stderr: ${t}`) };
  expect(emit(output, success(code, data as Record<string, unknown>), render, VIEW)).toBe(CODES[code].exit);
  return lines.join('\n');
}

/** The leaf commands of the CLI, as they are typed: `lease acquire`, `status`. */
function leaves(command: Command, prefix: string[] = []): string[] {
  return command.commands.flatMap((c) => (c.commands.length === 0 ? [[...prefix, c.name()].join(' ')] : leaves(c, [...prefix, c.name()])));
}

/** Verbs whose module renders its own answer, or that print no Envelope at all (the hooks). */
const OWN_RENDERING = [
  'status',
  'ingest',
  'hook',
  'install',
  'service install',
  'service uninstall',
  'service status',
  'journal repair',
  'open',
  'capsule template',
  'daemon',
  'doctor',
  'uninstall',
  'config',
  'completion',
];

describe('every verb says what happened in words', () => {
  it('no success of any verb prints a bare code word, and each names what to do next or what it made', () => {
    const fallback = new RegExp(`^(${SUCCESS_CODES.join('|')})( \\(state [A-Z_]+\\))?(: .*)?$`, 'm');
    for (const old of ['cycles', 'lease_acquired (state PREPARE)', 'daemon_stopping', 'cancelled (state NORMAL): nothing to cancel'])
      expect(old).toMatch(fallback);
    for (const [verb, samples] of Object.entries(SAMPLES)) {
      const render = RENDERERS[verb as keyof typeof RENDERERS] as Renderer;
      for (const [code, data] of samples) {
        const text = printed(render, code, data);
        // The old fallback's shape: a code, perhaps ` (state X)`, perhaps `: note` — and nothing else.
        expect(text, `${verb} → ${code}`).not.toMatch(fallback);
        expect(text.split(' ').length, `${verb} → ${code}: a sentence`).toBeGreaterThan(4);
      }
    }
  });

  it('every command on the command line has a renderer here or renders its own answer', async () => {
    const program = await buildProgram('0.0.0');
    const known = new Set([...Object.keys(RENDERERS), ...OWN_RENDERING]);
    for (const leaf of leaves(program)) expect(known.has(leaf) || known.has(leaf.split(' ')[0] ?? ''), leaf).toBe(true);
  });

  it('the answers carry what a person acts on: the token, the branch, HANDOFF.md, a table with ages', () => {
    expect(printed(RENDERERS['lease acquire'], 'lease_acquired', SAMPLES['lease acquire'][0]?.[1])).toMatch(/token 7.*\n.*handoff lease release --token 7/);
    const accepted = printed(RENDERERS.accept, 'accepted', SAMPLES.accept[0]?.[1]);
    expect(accepted).toMatch(/token 4/);
    expect(accepted).toContain(`${WS}/.session-handoff/${CYCLE}/HANDOFF.md`);
    expect(accepted).toContain('handoff return --token 4');
    // A package read from a remote only has no source workspace here: the remote is named, never `null`.
    expect(printed(RENDERERS.verify, 'verified', SAMPLES.verify[1]?.[1]).split('\n')[0]).toBe(
      `cycle ${CYCLE} verifies against its package on 'origin'; no lease was taken`,
    );
    const now = printed(RENDERERS.now, 'handoff_ready', ready());
    expect(now).toMatch(/branch +handoff\/x at aaaaaaaaaaaa, pushed to origin and read back/);
    expect(now).toMatch(/read +\/repo\/\.session-handoff\/.+\/HANDOFF\.md/);
    const list = printed(RENDERERS.list, 'cycles', SAMPLES.list[1]?.[1]).split('\n');
    expect(list[0]).toMatch(/^CYCLE +STATE +STARTED +INTEGRITY +WORKSPACE$/);
    expect(list[1]).toMatch(new RegExp(`^${CYCLE} +HANDOFF_READY +10 min ago +ok \\(1\\) +${WS}$`));
    const pruned = printed(RENDERERS.prune, 'ok', SAMPLES.prune[1]?.[1]).split('\n');
    expect(pruned[0]).toMatch(/^CYCLE +STARTED +WHERE +REF +WHAT$/);
    expect(pruned[1]).toMatch(new RegExp(`^${CYCLE} +10 min ago +here +handoff/${CYCLE} +would remove$`));
    expect(pruned[2]).toMatch(/here +handoff\/.+-return +kept: checked out$/);
    expect(pruned[3]).toMatch(/origin +refs\/handoff\/lease\/.+ +would remove$/);
    expect(pruned.join('\n')).toMatch(/dry run: nothing was changed/);
  });

  it('outside a repository: one line per workspace with its state, worst reading and lease', () => {
    const status = ready();
    const text = renderOverview(
      {
        workspaces: [
          { root: '/a', status },
          { root: '/b', status: { ...status, state: 'NORMAL', pressure: { percent: 83, metric: 'five_hour', source: 'x' } } },
        ],
      },
      'workspaces',
      VIEW,
    );
    expect(text).toMatch(/^ +\/a +HANDOFF_READY +no reading +on offer$/m);
    expect(text).toMatch(/^ +\/b +NORMAL +83 % five_hour +on offer$/m);
  });
});
