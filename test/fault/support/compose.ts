import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { PROTOCOL_VERSION } from '../../../protocol/index.js';
import type { Clock } from '../../../daemon/clock.js';
import { loadConfig } from '../../../daemon/config.js';
import type { DrainRunner } from '../../../daemon/evacuation/index.js';
import { resolveRepoRoot } from '../../../daemon/git/index.js';
import { buildServer } from '../../../daemon/http/index.js';
import { cachedRootResolver, createIngestService } from '../../../daemon/ingest/index.js';
import { createLogger } from '../../../daemon/logger.js';
import { createService } from '../../../daemon/service.js';
import { acquireInstanceGuard, Journal, openStateDir } from '../../../daemon/store/index.js';
import { createLeaseSync, createTakeoverService } from '../../../daemon/takeover/index.js';
import { WorkspaceRegistry } from '../../../daemon/workspaces/registry.js';
import { ensureWorkspaceDir } from '../../../daemon/workspaces/workspace-dir.js';
import { createWorkspaceJournal } from '../../../daemon/workspaces/workspace-journal.js';

/** The port the composed server believes it is bound to: the Host check compares against it. */
export const COMPOSED_PORT = 47_321;

/** Time under the test's control: the daemon reads no other clock. */
export class FakeClock implements Clock {
  constructor(private ms: number) {}

  now(): number {
    return this.ms;
  }

  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

/** A drain double: the model drives the drain's events itself, one runner action at a time. */
export interface DrainDouble extends DrainRunner {
  readonly started: string[];
}

export function idleDrain(): DrainDouble {
  const started: string[] = [];
  return { started, start: (root: string) => void started.push(root), isRunning: () => false, idle: async () => undefined };
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
 * The daemon's composition as daemon/main.ts wires it — state dir, instance guard, config, journal,
 * registry restored from the journal, takeover, service and the fastify server — minus the listening
 * socket, the file watchers and the Codex tail. The drain is supplied by the test. A restart is
 * `close()` and `compose()` again on the same state dir: the journal is reopened and replayed.
 */
export interface ComposeOptions {
  readonly stateDir: string;
  readonly clock: Clock;
  readonly drain: DrainDouble;
  /** Shared across restarts to spare git calls when many compositions see the same repositories. */
  readonly rootOf?: (dir: string) => Promise<string>;
  readonly onOpen?: (root: string) => Promise<void>;
}

export async function compose(options: ComposeOptions): Promise<Composed> {
  const { clock, drain } = options;
  const { dir, token } = await openStateDir(options.stateDir, { uid: process.getuid?.() ?? 0 });
  const guard = await acquireInstanceGuard(dir, process.pid);
  try {
    const config = await loadConfig(dir);
    const logger = createLogger(memoryLog().stream, 'warn');
    const journalPath = join(dir, 'journal.jsonl');
    const { journal, records } = await Journal.open(journalPath);
    const workspaceJournal = createWorkspaceJournal(journal, {
      compactAfterBytes: config.journal.compact_after_bytes,
      snapshot: () => registry.snapshotRecords(),
      log: logger,
    });
    const registry: WorkspaceRegistry = new WorkspaceRegistry({
      config,
      append: (record) => workspaceJournal.append(record),
      effect: (_effect, root) => void drain.start(root),
      // Entropy from a process-wide counter: never the same cycle id twice, even after a restart.
      meta: () => ({ at: clock.now(), entropy: base32(entropyCounter++) }),
      log: logger,
      onOpen: options.onOpen ?? ((root) => ensureWorkspaceDir(root)),
    });
    registry.restore(records);
    await registry.reconcile();
    const rootOf = options.rootOf ?? cachedRootResolver(resolveRepoRoot);
    const takeover = createTakeoverService({ registry, config, clock, rootOf, startDrain: (home) => drain.start(home) });
    const info = () => ({
      pid: process.pid,
      port: COMPOSED_PORT,
      protocol_version: PROTOCOL_VERSION,
      started_at: new Date(clock.now()).toISOString(),
      state_dir: dir,
    });
    const leaseSync = createLeaseSync({ registry, clock, log: logger, timeoutMs: Math.min(10_000, config.git_timeout_seconds * 1000) });
    const service = createService({
      registry,
      drain,
      takeover,
      leaseSync,
      guardWhenUnverified: config.guard_when_lease_unverified,
      clock,
      stateDir: dir,
      info,
      requestStop: () => undefined,
      resolveRoot: rootOf,
    });
    const ingest = createIngestService({ registry, clock, resolveRoot: rootOf, log: logger });
    const app = buildServer({ service, takeover, ingest, token, port: () => COMPOSED_PORT, logger, bodyLimit: config.body_limit_bytes });
    await app.ready();
    return {
      app,
      registry,
      journalPath,
      stateDir: dir,
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
        await app.close();
        await registry.flushReadings();
        await journal.close();
        await guard.release();
      },
    };
  } catch (error) {
    await guard.release();
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
