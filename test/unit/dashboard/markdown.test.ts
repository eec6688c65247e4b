import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeHtml, renderMarkdown } from '../../../daemon/http/dashboard/markdown.js';
import { buildManifest, createStepScope, initialSnapshot, renderHandoff, step } from '../../../protocol/index.js';
import type { Capsule, Manifest } from '../../../schemas/index.js';
import { EVERYTHING, hostileText, UNPRINTABLE } from '../protocol/hostile-text.js';
import { POLICY, T0 } from '../protocol/machine-harness.js';
import { checkpoint } from '../protocol/manifest-fixture.js';

const ALLOWED_TAGS = ['h1', 'h2', 'h3', 'p', 'strong', 'em', 'code', 'pre', 'ul', 'li', 'br'];

function onlyOwnMarkup(html: string): void {
  for (const [, tag, attrs] of html.matchAll(/<\/?([a-z0-9]+)([^>]*)>/g)) {
    expect(ALLOWED_TAGS).toContain(tag);
    expect(attrs === '' || /^ class="language-[a-z0-9-]+"$/.test(attrs ?? '')).toBe(true);
  }
}

/** A HANDOFF.md of the real renderer, every agent field (and the trigger's reason) set to `text`. */
function handoffOf(text: string): string {
  const fresh = initialSnapshot({ root: '/repo', policy: POLICY, profile: 'emergency-return', at: T0 });
  const { next } = step(createStepScope(fresh), fresh, {
    type: 'NOW',
    reason: 'test',
    wait: false,
    at: T0,
    entropy: 'abcdef',
  });
  if (next.context.cycle === null) throw new Error('no cycle');
  const list = [text, text];
  const capsule = {
    objective: text,
    next_action: text,
    acceptance_criteria: list,
    scope: [],
    out_of_scope: [],
    work: { completed: list, in_progress: list, remaining: list, blocked: list, deferred: list },
    decisions: list,
    assumptions: list,
    rejected_approaches: list,
    do_not_repeat: list,
    first_files: list,
    risks: list,
    do_not_change_silently: list,
    tools_used: [],
  } as Capsule;
  const manifest: Manifest = buildManifest({
    cycle: next.context.cycle,
    leg: 'out',
    revision: 1,
    createdAt: '2026-08-20T10:00:00.000Z',
    predecessor: null,
    source: 's1',
    capsule,
    quality: { score: 5, max: 6, missing: ['no acceptance criteria'] },
    repository: {
      remote: 'origin',
      remote_url: 'https://example.invalid/r.git',
      root_commit: 'a'.repeat(40),
      branch: 'main',
      head: 'b'.repeat(40),
      upstream: null,
      ahead: null,
      behind: null,
      dirty: { staged: ['a.ts'], unstaged: [], untracked: [] },
      operation_in_progress: null,
      instructions: [],
    },
    validations: [{ command: 'npm test', status: 'failed', exit_code: 1, duration_ms: 10, output_tail: text }],
    checkpoint,
  });
  return renderHandoff({ ...manifest, trigger: { ...manifest.trigger, reason: text } });
}

/** The page without what the agent wrote: quoted text is a `language-text` block, and only that. */
const withoutQuotes = (html: string) => html.replace(/<pre class="language-text"><code>[\s\S]*?<\/code><\/pre>/g, '<pre/>');

describe('HANDOFF.md on the dashboard', () => {
  it('renders the subset HANDOFF.md uses', () => {
    const html = renderMarkdown(
      [
        '# Handoff X',
        '',
        '**Next action:** run `npm test`',
        '',
        '## Work',
        '- one',
        '  - nested `a.ts`',
        '- _none recorded_',
        '',
        '```sh',
        'git clone a b',
        '```',
      ].join('\n'),
    );
    expect(html).toBe(
      [
        '<h1>Handoff X</h1>',
        '<p><strong>Next action:</strong> run <code>npm test</code></p>',
        '<h2>Work</h2>',
        '<ul><li>one<ul><li>nested <code>a.ts</code></li></ul></li><li><em>none recorded</em></li></ul>',
        '<pre class="language-sh"><code>git clone a b</code></pre>',
      ].join('\n'),
    );
  });

  it('escapes everything an agent wrote: no tag, attribute, URL or entity of the source survives as markup', () => {
    const hostile = [
      '# <script>alert(1)</script>',
      '**Next action:** <img src=x onerror="alert(2)">',
      '- [click](javascript:alert(3)) `<b>code</b>` **<i>bold</i>**',
      '```"><script>alert(4)</script>',
      '</code></pre><script>alert(5)</script>',
      '```',
      'a \uE0000\uE000 placeholder and &amp; an entity',
    ].join('\n');
    const html = renderMarkdown(hostile);
    expect(html).not.toMatch(/<script|<img|<i>|<b>|<a /i);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&lt;img src=x onerror=&quot;alert(2)&quot;&gt;');
    expect(html).toContain('<code>&lt;b&gt;code&lt;/b&gt;</code>');
    expect(html).toContain('<pre class="language-scriptalert4script"><code>&lt;/code&gt;&lt;/pre&gt;&lt;script&gt;alert(5)&lt;/script&gt;</code></pre>');
    expect(html).toContain('&amp;amp;');
    // Only the tags the renderer makes, and only its own class attribute.
    const tags = [...html.matchAll(/<\/?([a-z0-9]+)([^>]*)>/g)];
    for (const [, tag, attrs] of tags) {
      expect(['h1', 'h2', 'p', 'strong', 'em', 'code', 'pre', 'ul', 'li', 'br']).toContain(tag);
      expect(attrs === '' || /^ class="language-[a-z0-9-]+"$/.test(attrs ?? '')).toBe(true);
    }
  });

  it('fences of any length, backticks or tildes, close only on a run as long; code spans of any backtick run', () => {
    const html = renderMarkdown(['`````text', '````', '## not a heading', '~~~', '`````', '~~~~', '```', '~~~~~', 'a ``x ` y`` b ``` `` ```'].join('\n'));
    expect(html).toBe(
      [
        '<pre class="language-text"><code>````\n## not a heading\n~~~</code></pre>',
        '<pre><code>```</code></pre>',
        '<p>a <code>x ` y</code> b <code>``</code></p>',
      ].join('\n'),
    );
  });

  it('shows control and bidi characters escaped, never raw', () => {
    const html = renderMarkdown('- report\u202etxt.exe \x1b]0;owned\x07\n```\n\x1b[2J\u009b\n```');
    expect(html).not.toMatch(UNPRINTABLE);
    expect(html).toContain('report\\u{202e}txt.exe \\x1b]0;owned\\x07');
  });

  it("injection: HANDOFF.md with every construct in every agent field renders the daemon's headings only, the agent's text as code", () => {
    const hostile = renderMarkdown(handoffOf(EVERYTHING));
    const neutral = renderMarkdown(handoffOf('neutral'));
    expect(withoutQuotes(hostile)).toBe(withoutQuotes(neutral));
    expect(hostile.match(/<h1>/g)).toHaveLength(1);
    expect(hostile.match(/<p>Authority:/g)).toHaveLength(1);
    expect(hostile).not.toMatch(UNPRINTABLE);
    onlyOwnMarkup(hostile);
  });

  it('property: no agent text changes the rendered page outside its own code blocks', () => {
    const neutral = withoutQuotes(renderMarkdown(handoffOf('neutral')));
    fc.assert(
      fc.property(hostileText, (text) => {
        const html = renderMarkdown(handoffOf(text));
        expect(withoutQuotes(html)).toBe(neutral);
        expect(html).not.toMatch(UNPRINTABLE);
        onlyOwnMarkup(html);
      }),
      { numRuns: 200 },
    );
  });

  it('escapeHtml covers the five characters that matter', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
});
