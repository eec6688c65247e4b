import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { git } from '../../support/git.js';
import { toolResults, type ChatTurn } from './mock-chat-completions.js';
import type { MockProvider } from './mock-server.js';
import type { Run, Scene } from './scene.js';

/**
 * The checks every hooked agent on the chat-completions mock goes through the same way (Copilot CLI,
 * Qwen Code): each test file keeps what its agent does differently.
 */
export interface ChatAgentRig {
  readonly scene: Scene;
  readonly mock: MockProvider;
  /** One headless run of the agent with this prompt. */
  run(prompt: string): Promise<Run>;
  /** The tool call the mock makes next (null: none). */
  setTool(turn: ChatTurn | null): void;
}

export const sentSince = (mock: MockProvider, before: number): string =>
  mock.requests
    .slice(before)
    .map((r) => JSON.stringify(r.body))
    .join('\n');

/** What `handoff doctor --json` says of one agent. */
export async function doctorOf(scene: Scene, agent: string): Promise<Record<string, unknown> | undefined> {
  const doctor = await scene.handoff(['doctor', '--json']);
  return (JSON.parse(doctor.stdout) as { data: { agents: { agent: string }[] } }).data.agents.find((a) => a.agent === agent);
}

/** PREPARE by hand (the agent reports no percentage), then one run: the notice is in what the model got. */
export async function expectPrepareNotice(rig: ChatAgentRig): Promise<void> {
  expect((await rig.scene.handoff(['prepare', '--reason', 'agents suite'])).code).toBe(0);
  const before = rig.mock.requests.length;
  const result = await rig.run('carry on');
  expect(result.code, result.stderr).toBe(0);
  expect(sentSince(rig.mock, before)).toMatch(/session-handoff: \S+ is in PREPARE/);
}

/**
 * From EVACUATE (the agent says it is drained) or from HANDOFF_READY (an evacuation with no session to drain); the model asks to
 * write a file (`write(path)` is the agent's own tool call) and the guard refuses it: the file is not
 * written, the work tree is unchanged, exactly one tool result reaches the model (returned for the
 * agent's own wording to be checked), and the pickup names the cycle to accept.
 */
export async function expectGuardAtHandoffReady(rig: ChatAgentRig, write: (path: string) => ChatTurn): Promise<string> {
  const { scene, mock } = rig;
  if ((await scene.status())['state'] === 'EVACUATE') expect((await scene.handoff(['drained'])).code).toBe(0);
  await scene.untilState('HANDOFF_READY');
  const cycle = String(((await scene.status())['cycle'] as { id: string }).id);
  const file = join(scene.repo, 'notes.md');
  const tree = git(scene.repo, 'status', '--porcelain', '--untracked-files=all');
  rig.setTool(write(file));
  const before = mock.requests.length;
  const result = await rig.run('write the notes');
  rig.setTool(null);
  expect(result.code, result.stderr).toBe(0);
  expect(existsSync(file)).toBe(false);
  expect(git(scene.repo, 'status', '--porcelain', '--untracked-files=all')).toBe(tree);
  const refused = toolResults(mock.requests.slice(before));
  expect(refused).toHaveLength(1);
  expect(refused[0]).toMatch(/session-handoff: .* is in HANDOFF_READY: .*No session may change files now/);
  expect(sentSince(mock, before)).toContain(`handoff accept ${cycle} --as`);
  return refused[0] ?? '';
}
