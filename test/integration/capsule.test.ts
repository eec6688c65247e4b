import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manifest } from '../../schemas/index.js';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';

let daemon: DaemonProcess;
beforeAll(async () => {
  daemon = await startDaemon();
});
afterAll(async () => {
  await daemon.stop();
});

const MARKDOWN = `## Objective
Make the retry budget configurable.

## Next action
Run \`npm test -- src/retry.test.ts\` and fix src/retry.ts.

## Acceptance criteria
- npm test passes

## Work
### Completed
- parsed the config key

## Decisions
- keep the default at 3

## First files
- src/retry.ts
`;
const JSON_CAPSULE = {
  objective: 'Make the retry budget configurable.',
  next_action: 'Run `npm test -- src/retry.test.ts` and fix src/retry.ts.',
  acceptance_criteria: ['npm test passes'],
  work: { completed: ['parsed the config key'] },
  decisions: ['keep the default at 3'],
  first_files: ['src/retry.ts'],
};

async function evacuateWith(capsule: string, prepareFirst: boolean) {
  const repo = tempRepo();
  mkdirSync(join(repo, 'src'));
  writeFileSync(join(repo, 'src', 'retry.ts'), 'export const budget = 3;\n');
  if (prepareFirst) await cli(daemon.stateDir, ['prepare', '--json'], repo);
  const file = join(tempDir('capsule'), 'capsule');
  writeFileSync(file, capsule);
  const saved = await cli(daemon.stateDir, ['capsule', 'set', '--file', file, '--json'], repo);
  expect(saved.json.code).toBe('capsule_saved');
  const status = await cli(daemon.stateDir, ['status', '--json'], repo);
  const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], repo);
  const cycle = (now.json.data?.['cycle'] as { id: string }).id;
  const manifest = JSON.parse(readFileSync(join(repo, '.session-handoff', cycle, 'manifest.json'), 'utf8')) as Manifest;
  const handoff = readFileSync(join(repo, '.session-handoff', cycle, 'HANDOFF.md'), 'utf8');
  return { manifest, handoff, status: status.json.data };
}

describe('the capsule the agent writes', () => {
  it('Markdown and JSON give the same manifest capsule; a full one refreshed in PREPARE scores 6/6 at the top of HANDOFF.md', async () => {
    const fromMarkdown = await evacuateWith(MARKDOWN, true);
    const fromJson = await evacuateWith(JSON.stringify(JSON_CAPSULE), true);
    expect(fromMarkdown.manifest.capsule).toEqual(fromJson.manifest.capsule);
    expect(fromMarkdown.manifest.capsule_quality).toEqual({ score: 6, max: 6, missing: [] });
    expect(fromMarkdown.handoff).toMatch(
      /## Next action\n\n_Written by the source agent, unverified:_\n\n```text\n[^\n]+\n```\n\nCapsule quality, scored by the daemon: \*\*6\/6\*\*\.\n/,
    );
    expect(fromMarkdown.status?.['capsule_quality']).toEqual({ score: 6, max: 6, missing: [] });
  });

  it('a capsule written before the stage that asked for it, with a vague next action, says what is missing', async () => {
    const { manifest, handoff } = await evacuateWith(JSON.stringify({ ...JSON_CAPSULE, next_action: 'keep going' }), false);
    expect(manifest.capsule_quality).toEqual({
      score: 4,
      max: 6,
      missing: ['next action vague (name a file, command or test)', 'capsule older than the stage that asked for it'],
    });
    expect(handoff).toContain(
      'Capsule quality, scored by the daemon: **4/6**. What keeps it down:\n\n```text\nnext action vague (name a file, command or test)\ncapsule older than the stage that asked for it\n```',
    );
  });

  it('handoff capsule template prints every heading, and a filled template is accepted', async () => {
    const repo = tempRepo();
    const template = await cli(daemon.stateDir, ['capsule', 'template'], repo);
    expect(template.code).toBe(0);
    expect(template.stdout).toContain('## Next action');
    const file = join(tempDir('capsule'), 'capsule.md');
    writeFileSync(file, template.stdout.replace('One or two sentences: what this work is for.', 'Ship the parser.'));
    const saved = await cli(daemon.stateDir, ['capsule', 'set', '--file', file, '--json'], repo);
    expect(saved.json).toMatchObject({ code: 'capsule_saved', data: { capsule: { objective: 'Ship the parser.', next_action: null } } });
  });
});
