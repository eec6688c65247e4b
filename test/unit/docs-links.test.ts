import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AGENTS } from '../../adapters/agents/targets.js';
import { PAGE_HEADERS } from '../../daemon/http/dashboard/routes.js';
import { SESSION_TTL_MS, TICKET_TTL_MS } from '../../daemon/http/dashboard/session.js';
import { CODES } from '../../protocol/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

function markdownFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || (entry.name.startsWith('.') && entry.name !== '.clinerules') ? [] : markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

describe('the docs a newcomer follows', () => {
  it('every relative link in README, docs/ and examples/ points at a file that exists', () => {
    const files = ['README.md', ...markdownFiles('docs'), ...markdownFiles('examples')];
    const broken: string[] = [];
    for (const file of files) {
      const text = read(file).replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (target === undefined || /^[a-z]+:/.test(target) || target.startsWith('#')) continue;
        const path = join(ROOT, dirname(file), target.split('#')[0] ?? '');
        if (!existsSync(path)) broken.push(`${file} → ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('README has the quick start: the two commands, status, the dashboard, the demo', () => {
    const readme = read('README.md');
    const quick = /## Quick start\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? '';
    expect(quick).toMatch(/^handoff service install/m);
    expect(quick).toMatch(/^handoff install claude/m);
    expect(quick).toMatch(/handoff status/);
    expect(quick).toMatch(/handoff open/);
    expect(quick).toMatch(/npm run demo/);
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(pkg.scripts['demo']).toMatch(/examples\/demo\/run-demo\.mjs/);
  });

  it('one page per agent integration, each linked from the agents index', () => {
    const pages: Record<(typeof AGENTS)[number], string> = {
      claude: 'claude-code.md',
      codex: 'codex.md',
      cline: 'cline.md',
      opencode: 'opencode.md',
      gemini: 'gemini.md',
      copilot: 'copilot.md',
      qwen: 'qwen.md',
    };
    const index = read('docs/agents/README.md');
    for (const agent of AGENTS) {
      expect(existsSync(join(ROOT, 'docs/agents', pages[agent])), agent).toBe(true);
      expect(index).toContain(`(${pages[agent]})`);
    }
    expect(index).toContain('(provider-headers.md)');
  });

  it('dashboard.md states the rules the code enforces', () => {
    const doc = read('docs/dashboard.md').replace(/\s+/g, ' ');
    expect(doc).toContain(String(PAGE_HEADERS['content-security-policy']));
    expect(doc).toContain(`valid for ${TICKET_TTL_MS / 1000} s`);
    expect(doc).toContain(`${SESSION_TTL_MS / 3600_000} hours`);
    expect(doc).toContain('HttpOnly; SameSite=Strict; Path=/dashboard');
    expect(doc).toContain('exactly `http://127.0.0.1:PORT`');
    expect(doc).toContain('`same-origin` or `none`');
  });

  it('running at login is one command, and the page names the exits the unit does not restart on', () => {
    const doc = read('docs/running-at-login.md').replace(/\s+/g, ' ');
    expect(doc).toContain('handoff service install');
    for (const code of ['usage_error', 'invalid_config', 'daemon_already_running', 'insecure_state_dir'] as const)
      expect(doc).toContain(` ${CODES[code].exit}`);
  });

  it('the docs folder holds no stray file: every file is linked from somewhere', () => {
    const all = readdirSync(join(ROOT, 'docs'), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => relative(ROOT, join(e.parentPath, e.name)));
    const text = ['README.md', ...markdownFiles('docs')].map(read).join('\n');
    const unlinked = all.filter((path) => statSync(join(ROOT, path)).isFile() && !text.includes(path.split('/').pop() ?? ''));
    expect(unlinked).toEqual([]);
  });
});
