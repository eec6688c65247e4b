import { readFileSync } from 'node:fs';

/** What Linux's /proc says of a running process: its command line, parent and resident set. */
export function processFacts(pid: number): { argv: string[]; ppid: number; rssKb: number } {
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
  // The fields after the command's name, which may hold spaces and parentheses itself.
  const ppid = Number(
    readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /s, '')
      .split(' ')[1],
  );
  const rssKb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return { argv, ppid, rssKb };
}
