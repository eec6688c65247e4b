import { describe, expect, it } from 'vitest';
import { recoveryCommands, renderHandoff } from '../../../protocol/handoff-render.js';
import { EMPTY_CAPSULE } from '../../../protocol/manifest-model.js';
import type { Capsule, Manifest } from '../../../schemas/index.js';
import { checkpoint, manifestWith, repository } from './manifest-fixture.js';

const EMPTY = EMPTY_CAPSULE as Capsule;
const base = manifestWith(EMPTY);
const ID = base.cycle_id;
const C = 'c'.repeat(40);
const B = 'b'.repeat(40);
const with_ = (over: Partial<Manifest>): Manifest => ({ ...base, ...over });
/** The lines of one `## title` section, up to the next heading. */
function section(text: string, title: string): string[] {
  const lines = text.split('\n');
  const start = lines.indexOf(`## ${title}`);
  if (start === -1) return [];
  // The line naming the empty capsule lists follows the recovery section without a heading of its own.
  const end = lines.findIndex((line, i) => i > start && (line.startsWith('## ') || line.startsWith('_Not recorded by the source agent')));
  const body = lines.slice(start + 2, end === -1 ? undefined : end);
  while (body.at(-1) === '') body.pop();
  return body;
}

describe('HANDOFF.md: recovering the source, for each kind of checkpoint', () => {
  it('a handoff branch: cloned from the URL, the branch fetched, the commit checked out; the accept through the remote', () => {
    expect(recoveryCommands(base)).toEqual([
      `git clone --no-checkout 'https://example.invalid/r.git' 'handoff-${ID}'`,
      `cd 'handoff-${ID}'`,
      `git fetch origin 'refs/heads/handoff/x:refs/remotes/origin/handoff/x'`,
      `git switch --detach ${C}`,
    ]);
    const text = renderHandoff(base);
    expect(section(text, 'Recover the source')[0]).toBe(
      `The work tree (tracked and untracked files, ignored excluded) is commit \`${C}\` on \`refs/heads/handoff/x\` of remote \`origin\` (\`https://example.invalid/r.git\`); the remote was read back and holds it.`,
    );
    expect(text.split('\n')[2]).toBe(
      `Authority: none — verify before acting. Only the lease grants permission: run \`handoff accept ${ID} --from origin\` in your clone first (in the source checkout: \`handoff accept ${ID}\`); a clean clone is checked out on the branch \`handoff/${ID}\`.`,
    );
  });

  it('a handoff branch without a known URL is cloned from the remote name and says the URL is unknown', () => {
    const manifest = with_({ repository: { ...repository, remote_url: null } });
    expect(recoveryCommands(manifest)[0]).toBe(`git clone --no-checkout 'origin' 'handoff-${ID}'`);
    expect(section(renderHandoff(manifest), 'Recover the source')[0]).toContain('of remote `origin` (url unknown)');
  });

  it('a local ref: recoverable on this machine only, cloned from the repository path, accepted in a checkout here', () => {
    const manifest = with_({ checkpoint: { ...checkpoint, mechanism: 'local_ref', ref: 'refs/heads/handoff/x', remote: '/src/repo' } });
    expect(recoveryCommands(manifest)[0]).toBe(`git clone --no-checkout '/src/repo' 'handoff-${ID}'`);
    const text = renderHandoff(manifest);
    expect(section(text, 'Recover the source')[0]).toBe(
      `**Recoverable on this machine only:** the repository has no remote, so the checkpoint is the local ref \`refs/heads/handoff/x\` (commit \`${C}\`) in \`/src/repo\`.`,
    );
    expect(text.split('\n')[2]).toBe(
      `Authority: none — verify before acting. Only the lease grants permission: run \`handoff accept ${ID}\` in your checkout first.`,
    );
  });

  it('capsule only: the recorded HEAD from the remote, or from your clone when there is no URL, and no commit to keep changes from', () => {
    const only = { ...checkpoint, mechanism: 'capsule_only' as const, ref: null, commit: null, tree: null, remote: null, remote_verified: false };
    const manifest = with_({ checkpoint: only });
    expect(recoveryCommands(manifest)).toEqual([
      `git clone --no-checkout 'https://example.invalid/r.git' 'handoff-${ID}'`,
      `cd 'handoff-${ID}'`,
      `git switch --detach ${B}`,
    ]);
    expect(recoveryCommands(with_({ checkpoint: only, repository: { ...repository, remote_url: null, head: null } }))).toEqual([
      `git clone --no-checkout <your clone of this repository> 'handoff-${ID}'`,
      `cd 'handoff-${ID}'`,
    ]);
    const recover = section(renderHandoff(manifest), 'Recover the source');
    expect(recover[0]).toBe('**No checkpoint commit:** the source did not change, so the repository at its recorded HEAD is the state to recover.');
    expect(recover.join('\n')).not.toContain('git reset --mixed');
  });

  it('a commit id that is not a plain hex id is quoted like any other word', () => {
    const odd = with_({ checkpoint: { ...checkpoint, commit: 'HEAD; rm -rf ~' } });
    expect(recoveryCommands(odd)[3]).toBe("git switch --detach 'HEAD; rm -rf ~'");
    const sha256 = 'e'.repeat(64);
    expect(recoveryCommands(with_({ checkpoint: { ...checkpoint, commit: sha256 } }))[3]).toBe(`git switch --detach ${sha256}`);
  });

  it('keeping the changes uncommitted: on a branch named after the source branch, or handoff-work when detached', () => {
    expect(section(renderHandoff(base), 'Recover the source').slice(-6)).toEqual([
      '',
      'To continue with the changes uncommitted on top of `main`, as the source had them:',
      '',
      '```sh',
      `git switch -c 'main-handoff' ${C} && git reset --mixed ${B}`,
      '```',
    ]);
    const detached = section(renderHandoff(with_({ repository: { ...repository, branch: null } })), 'Recover the source');
    expect(detached).toContain(`To continue with the changes uncommitted on top of \`${B}\`, as the source had them:`);
    expect(detached).toContain(`git switch -c 'handoff-work-handoff' ${C} && git reset --mixed ${B}`);
  });

  it('the return leg: the accept in the source checkout brings the work home', () => {
    const text = renderHandoff(with_({ leg: 'return' }));
    expect(text.split('\n')[0]).toBe(`# Handoff ${ID} (return leg, revision 1)`);
    expect(section(text, 'Recover the source').slice(-1)).toEqual([
      `In the source checkout, \`handoff accept ${ID} --return\` brings the returned work into the work tree, uncommitted on top of its branch; it changes nothing when that tree changed since the freeze, and says so.`,
    ]);
  });
});

describe("HANDOFF.md: the daemon's own sections say what it knows, and what it does not", () => {
  it('a capsule without a next action or objective says so, and a full score needs no reasons', () => {
    const text = renderHandoff(with_({ capsule_quality: { score: 6, max: 6, missing: [] } }));
    expect(section(text, 'Next action')).toEqual([
      '_The capsule names no next action: read the objective and the work lists._',
      '',
      'Capsule quality, scored by the daemon: **6/6**.',
    ]);
    expect(section(text, 'Objective')).toEqual(['_not given_']);
  });

  it('the work lists the agent filled, each under its bold name, and no heading for an empty one', () => {
    const capsule = { ...EMPTY, work: { ...EMPTY.work, completed: ['a'], blocked: ['b\nsecond line'] } };
    expect(section(renderHandoff(with_({ capsule })), 'Work')).toEqual([
      '**Completed**',
      '',
      '_Written by the source agent, unverified:_',
      '',
      '```text',
      '- a',
      '```',
      '',
      '**Blocked**',
      '',
      '_Written by the source agent, unverified:_',
      '',
      '```text',
      '- b',
      '  second line',
      '```',
    ]);
  });

  it('validations: each with its status, command, exit and time, and the last 15 lines of its output', () => {
    const output = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n');
    const text = renderHandoff(
      with_({
        validations: [
          { command: 'npm test', status: 'failed', exit_code: 1, duration_ms: 1200, output_tail: output },
          { command: 'npm run lint', status: 'not_run', exit_code: null, duration_ms: null, output_tail: null },
        ],
      }),
    );
    expect(section(text, 'Validations')).toEqual([
      '**FAILED** `npm test` (exit 1, 1200 ms)',
      '',
      '_Its output, last 15 lines, as the command printed it:_',
      '',
      '```text',
      ...Array.from({ length: 15 }, (_, i) => `line ${i + 6}`),
      '```',
      '',
      '**NOT_RUN** `npm run lint`',
    ]);
    expect(section(renderHandoff(with_({ validations: [] })), 'Validations')).toEqual(['_none configured_']);
  });

  it('the repository as observed: detached, no upstream, an operation, each dirty path once, the instruction files', () => {
    const text = renderHandoff(
      with_({
        repository: {
          ...repository,
          branch: null,
          upstream: null,
          ahead: null,
          behind: null,
          operation_in_progress: 'rebase',
          dirty: { staged: ['a.ts'], unstaged: ['a.ts', 'b.ts'], untracked: ['n.md'] },
          instructions: [
            { path: 'AGENTS.md', sha256: 'f'.repeat(64) },
            { path: 'CLAUDE.md', sha256: 'f'.repeat(64) },
          ],
        },
      }),
    );
    expect(section(text, 'Repository (observed by the daemon)')).toEqual([
      `- branch: _detached HEAD_; HEAD \`${B}\``,
      '- upstream: _none_',
      '- operation in progress: rebase',
      '- staged: 1, unstaged: 2, untracked: 1',
      '  - `a.ts`',
      '  - `b.ts`',
      '  - `n.md`',
      '- instruction files: `AGENTS.md`, `CLAUDE.md`',
    ]);
    expect(section(renderHandoff(base), 'Repository (observed by the daemon)').slice(0, 3)).toEqual([
      `- branch: \`main\`; HEAD \`${B}\``,
      '- upstream: `origin/main` (ahead 1, behind 0)',
      '- operation in progress: none',
    ]);
    expect(section(renderHandoff(base), 'Repository (observed by the daemon)').at(-1)).toBe('- instruction files: none');
  });

  it('at most 50 dirty paths are listed', () => {
    const many = Array.from({ length: 60 }, (_, i) => `f${i}`);
    const lines = section(
      renderHandoff(with_({ repository: { ...repository, dirty: { staged: many, unstaged: [], untracked: [] } } })),
      'Repository (observed by the daemon)',
    );
    expect(lines.filter((l) => l.startsWith('  - '))).toHaveLength(50);
  });

  it('why: the trigger, the reason quoted as given, the readings, and how the drain wait ended', () => {
    const trigger = {
      kind: 'telemetry' as const,
      reason: 'five_hour at 95 %',
      readings: [
        {
          source: 'claude-statusline' as const,
          metric: 'five_hour' as const,
          used_percent: 95,
          resets_at: null,
          observed_at: '2026-08-20T09:59:00Z',
          raw_sha256: null,
        },
        {
          source: 'codex-rollout' as const,
          metric: 'context' as const,
          used_percent: null,
          resets_at: null,
          observed_at: '2026-08-20T09:58:00Z',
          raw_sha256: null,
        },
      ],
    };
    expect(section(renderHandoff(with_({ trigger, drain_wait: 'timeout' })), 'Why this handoff')).toEqual([
      'Trigger: telemetry. The reason, as it was given:',
      '',
      '```text',
      'five_hour at 95 %',
      '```',
      '',
      '- five_hour 95 % from `claude-statusline`, observed `2026-08-20T09:59:00Z`',
      '- context unknown % from `codex-rollout`, observed `2026-08-20T09:58:00Z`',
      '',
      'The source agent did not say it was drained within the drain timeout: the snapshot may hold a step half done.',
    ]);
    expect(section(renderHandoff(with_({ trigger: { kind: 'manual', reason: '', readings: [] } })), 'Why this handoff')).toEqual(['Trigger: manual.']);
  });

  it.each([
    ['drained', 'The source agent finished its step and said so (`handoff drained`) before the snapshot.'],
    ['no_wait', 'The evacuation did not wait for the source agent (`--no-wait`): the snapshot may hold a step half done.'],
    ['no_agent', 'No agent was draining: no agent session was seen working in the repository, so nothing was waited for.'],
  ] as const)('the drain wait %s is said in words', (wait, words) => {
    expect(section(renderHandoff(with_({ drain_wait: wait })), 'Why this handoff').at(-1)).toBe(words);
  });
});
