import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import type { Envelope } from '../../../protocol/index.js';
import { action } from '../context.js';
import { writeOpenFile } from '../open-file.js';

interface Link {
  readonly url: string;
  readonly expires_at: string;
}

/** The platform's "open this URL" command; $BROWSER wins, as with other command-line tools. */
export function browserCommand(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): [string, string[]] {
  const chosen = env['BROWSER'];
  if (chosen !== undefined && chosen.trim() !== '') return [chosen.trim(), []];
  if (platform === 'darwin') return ['open', []];
  if (platform === 'win32') return ['cmd', ['/c', 'start', '""']];
  return ['xdg-open', []];
}

/** Starts the browser on a file URL (never the link itself) and does not wait for it; false when it could not even be started. */
function launch(url: string): Promise<boolean> {
  const [command, args] = browserCommand(process.platform, process.env);
  return new Promise((resolve) => {
    const child = spawn(command, [...args, url], { detached: true, stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
}

export function registerOpen(program: Command): void {
  program
    .command('open')
    .description('the dashboard in your browser, through a one-time loopback link (it works once, within 60 s)')
    .option('--no-browser', 'only print the link')
    .action(
      action(
        async (ctx, options: { browser: boolean }): Promise<Envelope> => {
          const answer = await ctx.call({ method: 'POST', path: '/v1/dashboard/link' });
          if (answer.error || ctx.output.json || !options.browser) return answer;
          const opened = await launch(await writeOpenFile(ctx.stateDir, answer.data as Link, Date.now()));
          return { ...answer, data: { ...(answer.data as Link), opened } };
        },
        (link: Link & { opened?: boolean }) =>
          link.opened === undefined
            ? `${link.url}\n(one-time link: open it within 60 s; it signs this browser in to the dashboard)`
            : link.opened
              ? `opened the dashboard in your browser; if nothing appeared, open this one-time link within 60 s:\n${link.url}`
              : `could not start a browser; open this one-time link within 60 s:\n${link.url}`,
      ),
    );
}
