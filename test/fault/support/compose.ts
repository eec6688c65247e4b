import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Clock, Intervals } from '../../../daemon/clock.js';
import { claimStateDir, composeDaemon } from '../../../daemon/compose-daemon.js';
import { loadConfig } from '../../../daemon/config.js';
import type { DrainRunner } from '../../../daemon/evacuation/index.js';
import { resolveRepoRoot } from '../../../daemon/git/index.js';
import { cachedRootResolver } from '../../../daemon/ingest/index.js';
import { createLogger } from '../../../daemon/logger.js';
import type { WorkspaceRegistry } from '../../../daemon/workspaces/registry.js';
import { ensureWorkspaceDir } from '../../../daemon/workspaces/workspace-dir.js';
import type { Config } from '../../../schemas/index.js';

/** The port the composed server believes it is bound to: the Host check compares against it. */
export const COMPOSED_PORT = 47_321;

interface Repeating {
  readonly ms: number;
  readonly task: () => Promise<void>;
  next: number;
}

/**
 * Time under the test's control: the daemon reads no other clock, and its repeating work (the
 * coalesced readings write, the lease sync) runs on this time too, when the test lets it (`tick`).
 */
export class FakeClock implements Clock, Intervals {
  private readonly repeating = new Set<Repeating>();

  constructor(private ms: number) {}

  now(): number {
    return this.ms;
  }

  /** Moves time only: repeating work that comes due waits for the next `tick`. */
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }

  /** Repeating tasks registered and not cancelled: a closed composition leaves none behind. */
  get repeatingTasks(): number {
    return this.repeating.size;
  }

  every(ms: number, task: () => Promise<void>): () => void {
    const entry: Repeating = { ms, task, next: this.ms + ms };
    this.repeating.add(entry);
    return () => void this.repeating.delete(entry);
  }

  /**
   * Moves time, then runs once each repeating task that came due and waits for it, so whatever it
   * writes is written before the test looks. A task due several times over runs once, as node's
   * interval does after a long block.
   */
  async tick(seconds: number): Promise<void> {
    this.advance(seconds);
    const due = [...this.repeating].filter((entry) => entry.next <= this.ms).sort((x, y) => x.next - y.next);
    for (const entry of due) {
      entry.next += entry.ms * (Math.floor((this.ms - entry.next) / entry.ms) + 1);
      await entry.task();
    }
  }
}

/** A drain double: the model drives the drain's events itself, one runner action at a time. */
export interface DrainDouble extends DrainRunner {
  readonly started: string[];
}

export function idleDrain(): DrainDouble {
  const started: string[] = [];
  return { started, start: (root: string) => void started.push(root), isRunning: () => false, progress: () => null, idle: async () => undefined };
}

export interface Composed {
  readonly app: FastifyInstance;
  readonly registry: WorkspaceRegistry;
  readonly journalPath: string;
  readonly stateDir: string;
  readonly token: string;
  inject(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: InjectedBody }>;
  close(): Promise<void>;
}

export interface InjectedBody {
  code: string;
  data: Record<string, unknown> | null;
  authority: string;
  error?: { message: string; hint: string };
}

/** Log lines go nowhere but are kept, so a failing case can show what the daemon said. */
export function memoryLog(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      if (lines.length > 200) lines.shift();
      done();
    },
  });
  return { stream, lines };
}

export function writeConfig(stateDir: string, config: Record<string, unknown>): void {
  writeFileSync(join(stateDir, 'config.json'), JSON.stringify(config));
}

/**
 * The daemon's composition (daemon/compose-daemon.ts, the one daemon/main.ts runs) on the test's
 * clock, built without listening: state dir claimed, config, journal, registry restored from it, the
 * file watchers, the Codex tail (on an empty CODEX_HOME in the state dir), the repeating work on
 * `clock`, takeover, service and the fastify app. A restart is `close()` and `compose()` again on
 * the same state dir: the journal is reopened and replayed.
 */
export interface ComposeOptions {
  readonly stateDir: string;
  readonly clock: FakeClock;
  /** The model's scripted drain; without one, the daemon's own drain runner (daemon/evacuation/). */
  readonly drain?: DrainDouble;
  /** Shared across restarts to spare git calls when many compositions see the same repositories. */
  readonly rootOf?: (dir: string) => Promise<string>;
  readonly onOpen?: (root: string) => Promise<void>;
}

const withoutRehearsal = (config: Config): Config => ({ ...config, rehearsal: { ...config.rehearsal, enabled: false } });

export async function compose(options: ComposeOptions): Promise<Composed> {
  const { clock, drain } = options;
  const claimed = await claimStateDir(options.stateDir);
  try {
    const codexHome = join(claimed.dir, 'codex-home');
    mkdirSync(codexHome, { recursive: true, mode: 0o700 });
    const daemon = await composeDaemon({
      stateDir: claimed.dir,
      token: claimed.token,
      // The reference models have no rehearsal (daemon/rehearsal/): its WAY_OUT record would land
      // whenever git answers, between their steps. test/integration/rehearsal.test.ts covers it.
      config: withoutRehearsal(await loadConfig(claimed.dir)),
      port: COMPOSED_PORT,
      logger: createLogger(memoryLog().stream, 'warn'),
      clock,
      // The test's time runs the waits too (the drain's wait for `handoff drained`, the dashboard's tickets).
      monotonic: clock,
      intervals: clock,
      // Entropy from a process-wide counter: never the same cycle id twice, even after a restart.
      entropy: () => base32(entropyCounter++),
      env: { CODEX_HOME: codexHome },
      requestStop: () => undefined,
      drainRunner: drain === undefined ? undefined : () => drain,
      rootOf: options.rootOf,
      prepareWorkspace: options.onOpen,
    });
    const { app, token } = daemon;
    return {
      app,
      registry: daemon.registry,
      journalPath: daemon.journalPath,
      stateDir: daemon.stateDir,
      token,
      async inject(method, url, body, headers = {}) {
        const response = await app.inject({
          method: method as 'GET',
          url,
          headers: {
            host: `127.0.0.1:${COMPOSED_PORT}`,
            authorization: `Bearer ${token}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...headers,
          },
          ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
        });
        return { status: response.statusCode, body: response.json<InjectedBody>() };
      },
      async close() {
        await daemon.close();
        await claimed.release();
      },
    };
  } catch (error) {
    await claimed.release();
    throw error;
  }
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
let entropyCounter = 0;

function base32(n: number): string {
  let out = '';
  let rest = n;
  for (let i = 0; i < 6; i += 1) {
    out = (BASE32[rest % 32] ?? 'a') + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

/** A root resolver and a workspace-dir preparer that do their git work once per directory. */
export function sharedRepoHelpers(): Pick<ComposeOptions, 'rootOf' | 'onOpen'> {
  const prepared = new Map<string, Promise<void>>();
  return {
    rootOf: cachedRootResolver(resolveRepoRoot),
    onOpen: (root) => {
      const done = prepared.get(root) ?? ensureWorkspaceDir(root);
      prepared.set(root, done);
      return done;
    },
  };
}
