import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export type AgentName = 'claude-code' | 'codex' | 'gemini-cli' | 'opencode' | 'copilot' | 'qwen-code' | 'cline';

interface Pinned {
  readonly package: string;
  readonly version: string;
  readonly bin: string;
}

/** The one list of agent versions the suite has proven; docs/agents pages cite it. */
export const VERSIONS = JSON.parse(readFileSync(new URL('../versions.json', import.meta.url), 'utf8')) as Record<AgentName, Pinned>;

export interface InstalledAgent {
  readonly name: AgentName;
  readonly version: string;
  /** The agent's executable (its npm bin link). */
  readonly bin: string;
  /** Where its package lives, for an agent's own helpers (Gemini CLI's node-pty). */
  readonly prefix: string;
}

/** Outside the repository and shared by every checkout: installing four agents costs about a minute. */
export function agentCache(): string {
  return join(process.env['XDG_CACHE_HOME'] || join(homedir(), '.cache'), 'session-handoff', 'agents');
}

function npmInstall(prefix: string, spec: string): Promise<string> {
  return new Promise((resolve, reject) => {
    // --ignore-scripts is not used: the agents' own postinstall steps pick their native binary.
    execFile(
      'npm',
      ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--no-save', '--loglevel', 'error', spec],
      { encoding: 'utf8', timeout: 300_000, env: { ...process.env, npm_config_update_notifier: 'false' } },
      (error, stdout, stderr) => (error ? reject(new Error(`npm install ${spec} failed: ${stderr || error.message}`)) : resolve(stdout)),
    );
  });
}

/**
 * Installs the pinned version into the cache unless it is there. A staging directory is renamed into
 * place at the end, so an interrupted install never looks like a finished one.
 */
export async function ensureAgent(name: AgentName): Promise<InstalledAgent> {
  const pinned = VERSIONS[name];
  const prefix = join(agentCache(), `${pinned.package.replace('/', '+')}@${pinned.version}`);
  const bin = join(prefix, 'node_modules', '.bin', pinned.bin);
  if (!existsSync(bin)) {
    const staging = `${prefix}.staging-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    try {
      await npmInstall(staging, `${pinned.package}@${pinned.version}`);
      // Another checkout may have finished the same install meanwhile: its copy is in use, keep it.
      if (existsSync(bin)) rmSync(staging, { recursive: true, force: true });
      else {
        rmSync(prefix, { recursive: true, force: true });
        renameSync(staging, prefix);
      }
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      throw error;
    }
  }
  return { name, version: pinned.version, bin, prefix };
}

/**
 * What a test file does when the agent cannot be had: in CI that is a failure (the suite would prove
 * nothing); elsewhere the file is skipped with the reason printed, as an offline laptop cannot install.
 */
export async function agentOrSkip(name: AgentName): Promise<InstalledAgent | undefined> {
  try {
    return await ensureAgent(name);
  } catch (error) {
    if (process.env['CI']) throw error;
    console.warn(`skipping the ${name} suite: ${(error as Error).message}`);
    return undefined;
  }
}
