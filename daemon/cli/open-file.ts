import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { assertPrivate } from '../store/index.js';

/** Where `handoff open` leaves its redirect files: inside the 0700 state dir, a 0700 dir of its own. */
export const OPEN_DIR = 'open';

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/**
 * The one-time link as a page of this user that sends the browser on, as Jupyter does
 * (jupyter_server's redirect file, `ServerApp.use_redirect_file`): the browser is given the file's
 * path, so the ticket is in no process's argv or environment, which every local user can read
 * (/proc/<pid>/cmdline). The file is 0600 in a 0700 dir; its name says when its ticket expires, and
 * files of expired tickets are removed by the next `handoff open`.
 */
export async function writeOpenFile(stateDir: string, link: { url: string; expires_at: string }, now: number): Promise<string> {
  const dir = join(stateDir, OPEN_DIR);
  await mkdir(dir, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  assertPrivate(dir, await lstat(dir), 'directory', process.getuid?.() ?? 0);
  for (const name of await readdir(dir)) {
    const expires = Number(/^(\d+)-[a-z0-9]+\.html$/.exec(name)?.[1] ?? Number.NaN);
    if (!(expires > now)) await rm(join(dir, name), { force: true });
  }
  const file = join(dir, `${Date.parse(link.expires_at)}-${randomBytes(8).toString('hex')}.html`);
  const url = escapeHtml(link.url);
  const page = [
    '<!DOCTYPE html>',
    '<html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">',
    `<meta http-equiv="refresh" content="0;url=${url}">`,
    '<title>session-handoff dashboard</title></head>',
    `<body><p>Opening the dashboard. If nothing happens, <a href="${url}">open it here</a> (this link works once, until ${escapeHtml(link.expires_at)}).</p></body></html>`,
    '',
  ].join('\n');
  // 'wx': a new file or nothing (O_CREAT|O_EXCL never follows a link planted in its place).
  await writeFile(file, page, { mode: 0o600, flag: 'wx' });
  return pathToFileURL(file).href;
}
