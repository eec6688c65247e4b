import { describe, expect, it } from 'vitest';
import { escapeHtml, renderMarkdown } from '../../../daemon/http/dashboard/markdown.js';

describe('HANDOFF.md on the dashboard', () => {
  it('renders the subset HANDOFF.md uses', () => {
    const html = renderMarkdown(['# Handoff X', '', '**Next action:** run `npm test`', '', '## Work', '- one', '  - nested `a.ts`', '- _none recorded_', '', '```sh', 'git clone a b', '```'].join('\n'));
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

  it('escapeHtml covers the five characters that matter', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
});
