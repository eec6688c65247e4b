/**
 * A small Markdown renderer for HANDOFF.md on the dashboard. HANDOFF.md carries text an agent wrote
 * (the capsule), so it is untrusted: every character of the source is HTML-escaped before any markup
 * is added, the only markup produced is a fixed set of tags without attributes (bar a class on code
 * blocks), and links are shown as text, never followed. The page's Content-Security-Policy forbids
 * inline script besides, so a mistake here could not run code.
 */

import { printable } from '../../../protocol/printable.js';

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch] ?? ch);
}

/**
 * Code spans as CommonMark reads them: a run of n backticks opens, the next run of exactly n closes
 * (HANDOFF.md quotes names in spans whose fence is longer than any run inside). One space each side
 * is padding when both are there.
 */
function holdCodeSpans(escaped: string, spans: string[]): string {
  let out = '';
  let at = 0;
  for (;;) {
    const open = /`+/g;
    open.lastIndex = at;
    const start = open.exec(escaped);
    if (start === null) return out + escaped.slice(at);
    const closing = new RegExp(`(?<!\`)\`{${start[0].length}}(?!\`)`, 'g');
    closing.lastIndex = open.lastIndex;
    const end = closing.exec(escaped);
    if (end === null) {
      // No closing run: the backticks are text.
      out += escaped.slice(at, open.lastIndex);
      at = open.lastIndex;
      continue;
    }
    let code = escaped.slice(open.lastIndex, end.index);
    if (/^ .*[^ ].* $/.test(code) || /^ [^ ] $/.test(code)) code = code.slice(1, -1);
    spans.push(`<code>${code}</code>`);
    out += `${escaped.slice(at, start.index)}\uE000${spans.length - 1}\uE000`;
    at = closing.lastIndex;
  }
}

/** Inline markup on already-escaped text: `code`, **bold**, _emphasis_. Code spans are taken out first. */
function inline(escaped: string): string {
  const spans: string[] = [];
  const held = holdCodeSpans(escaped, spans);
  const marked = held.replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>').replace(/(^|[\s(])_([^_]+)_(?=$|[\s.,;:)])/g, '$1<em>$2</em>');
  return marked.replace(/\uE000(\d+)\uE000/g, (_m, index: string) => spans[Number(index)] ?? '');
}

interface ListItem {
  readonly depth: number;
  readonly html: string;
}

function renderList(items: readonly ListItem[]): string {
  let html = '';
  const open: number[] = [];
  for (const item of items) {
    while (open.length > 0 && (open.at(-1) ?? 0) > item.depth) {
      html += '</li></ul>';
      open.pop();
    }
    if (open.length === 0 || (open.at(-1) ?? 0) < item.depth) {
      html += '<ul>';
      open.push(item.depth);
    } else {
      html += '</li>';
    }
    html += `<li>${item.html}`;
  }
  while (open.length > 0) {
    html += '</li></ul>';
    open.pop();
  }
  return html;
}

/** Markdown (the subset HANDOFF.md uses) → HTML that carries no attribute, URL or script of the source. */
export function renderMarkdown(source: string): string {
  // U+E000 (private use) is the placeholder of code spans below; it has no business in a text file.
  // Control and bidi characters are shown escaped, as on a terminal.
  const lines = printable(source.replace(/\uE000/g, '').replace(/\r\n?/g, '\n'), { lines: true }).split('\n');
  const out: string[] = [];
  let paragraph: string[] = [];
  let list: ListItem[] = [];
  const flush = () => {
    if (paragraph.length > 0) out.push(`<p>${paragraph.map((l) => inline(escapeHtml(l))).join('<br>')}</p>`);
    if (list.length > 0) out.push(renderList(list));
    paragraph = [];
    list = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    // A fence as CommonMark has it: three or more backticks or tildes (a backtick fence's info has no
    // backtick), closed only by a run of the same character at least as long.
    const fence = /^( {0,3})(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence && !((fence[2] ?? '').startsWith('`') && (fence[3] ?? '').includes('`'))) {
      flush();
      const indent = fence[1]?.length ?? 0;
      const run = fence[2] ?? '```';
      const closing = new RegExp(`^ {0,3}${run[0] === '`' ? '`' : '~'}{${run.length},}[ \t]*$`);
      const language = (fence[3] ?? '')
        .trim()
        .replace(/[^a-z0-9-]/gi, '')
        .slice(0, 20);
      const code: string[] = [];
      for (i++; i < lines.length && !closing.test(lines[i] ?? ''); i++)
        code.push((lines[i] ?? '').slice(Math.min(indent, /^ */.exec(lines[i] ?? '')?.[0].length ?? 0)));
      out.push(`<pre${language ? ` class="language-${language}"` : ''}><code>${escapeHtml(code.join('\n'))}</code></pre>`);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      const level = heading[1]?.length ?? 1;
      out.push(`<h${level}>${inline(escapeHtml(heading[2] ?? ''))}</h${level}>`);
      continue;
    }
    const item = /^(\s*)[-*]\s+(.*)$/.exec(line);
    if (item) {
      if (paragraph.length > 0) {
        out.push(`<p>${paragraph.map((l) => inline(escapeHtml(l))).join('<br>')}</p>`);
        paragraph = [];
      }
      list.push({ depth: Math.floor((item[1]?.length ?? 0) / 2), html: inline(escapeHtml(item[2] ?? '')) });
      continue;
    }
    if (line.trim() === '') {
      flush();
      continue;
    }
    if (list.length > 0) flush();
    paragraph.push(line.trim());
  }
  flush();
  return out.join('\n');
}
