import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { capsuleTemplate, success } from '../../../protocol/index.js';
import { action, usage } from '../context.js';
import { RENDERERS } from '../render/index.js';

async function readInput(file: string | undefined): Promise<string> {
  if (file !== undefined) return readFile(file, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function registerCapsule(program: Command): void {
  const capsule = program.command('capsule').description("the agent's continuation capsule: objective, decisions, the one next action");

  capsule
    .command('set')
    .description('validate and store the capsule (JSON, or Markdown with the template headings) from --file or stdin')
    .option('--file <path>', 'read the capsule from this file instead of stdin')
    .action(
      action(async (ctx, options: { file?: string }) => {
        const text = await readInput(options.file);
        // JSON when it looks like an object; otherwise the daemon reads it as Markdown.
        let value: unknown = text;
        if (text.trimStart().startsWith('{')) {
          try {
            value = JSON.parse(text);
          } catch (error) {
            usage(
              `the capsule is not valid JSON: ${(error as Error).message}`,
              'give one JSON object with the capsule fields, or Markdown (`handoff capsule template`)',
            );
          }
        }
        return ctx.call({ method: 'POST', path: '/v1/capsule', body: { repo: ctx.repo, capsule: value } });
      }, RENDERERS['capsule set']),
    );

  capsule
    .command('template')
    .description('print the Markdown skeleton of a capsule (every heading); write it, then `handoff capsule set --file F`')
    .action(
      action(
        async () => success('ok', { template: capsuleTemplate() }),
        (data: { template: string }) => data.template,
      ),
    );

  capsule
    .command('show')
    .description('print the capsule on disk')
    .action(action((ctx) => ctx.call({ method: 'GET', path: '/v1/capsule', query: { repo: ctx.repo } }), RENDERERS['capsule show']));
}
