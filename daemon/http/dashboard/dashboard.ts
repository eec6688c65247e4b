import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock, Monotonic } from '../../clock.js';
import type { Logger } from '../../logger.js';
import type { DaemonInfo } from '../../service.js';
import type { TakeoverService } from '../../takeover/index.js';
import type { WorkspaceChange } from '../../workspaces/workspace.js';
import type { WorkspaceRegistry } from '../../workspaces/registry.js';
import { createDashboardService, type DashboardService } from './dashboard-service.js';
import { ReadingHistory, type HistoryLimits } from './history.js';
import { LiveStreams } from './live.js';
import { StageMarks } from './stage-marks.js';
import { dashboardRoutes } from './routes.js';
import { DashboardSessions } from './session.js';

export interface DashboardDeps {
  readonly registry: WorkspaceRegistry;
  readonly takeover: TakeoverService;
  readonly clock: Clock;
  /** The login tickets' and sessions' expiry. */
  readonly monotonic: Monotonic;
  readonly info: () => DaemonInfo;
  readonly port: () => number;
  readonly log: Logger;
  /** The journal's records at start: the timelines begin with the readings they hold. */
  readonly records?: readonly unknown[];
  readonly historyLimits?: HistoryLimits;
  /** How often every open page gets the whole picture again (ages and credibility move with time). */
  readonly refreshMs?: number;
}

export interface Dashboard {
  readonly service: DashboardService;
  /** A one-time link to the page (`POST /v1/dashboard/link`, served by the /v1 table). */
  issueLink(): { url: string; expires_at: string };
  /** For security.ts: true when the route is the dashboard's and the browser rule let it through (throws otherwise). */
  gate(request: FastifyRequest, config: FastifyContextConfig): boolean;
  register(app: FastifyInstance): void;
}

/**
 * The live dashboard: a page served by the daemon itself, its readings history, its sessions and its
 * event streams. Built at the composition root, where the registry exists; registered by buildServer.
 */
export function createDashboard(deps: DashboardDeps): Dashboard {
  const history = new ReadingHistory(deps.historyLimits);
  history.seed(deps.records ?? []);
  const stages = new StageMarks();
  stages.seed(deps.records ?? []);
  const service = createDashboardService({ registry: deps.registry, takeover: deps.takeover, history, stages, clock: deps.clock, info: deps.info });
  const sessions = new DashboardSessions({ clock: deps.clock, monotonic: deps.monotonic, port: deps.port });
  const live = new LiveStreams();
  const log = deps.log.child({ module: 'dashboard' });

  // One card build per workspace at a time; changes that arrive meanwhile are folded into one more.
  const building = new Map<string, Promise<void>>();
  const dirty = new Set<string>();
  function push(root: string): void {
    if (live.size === 0) return;
    if (building.has(root)) {
      dirty.add(root);
      return;
    }
    const run = service
      .card(root)
      .then((card) => {
        if (card !== null) live.broadcast('workspace', { now: new Date(deps.clock.now()).toISOString(), card });
      })
      .catch((error: unknown) => log.warn({ workspace: root, err: error }, 'could not build a dashboard card'))
      .finally(() => {
        building.delete(root);
        if (dirty.delete(root)) push(root);
      });
    building.set(root, run);
  }

  const observe = (change: WorkspaceChange) => {
    if (change.event.type === 'READING') history.record(change.root, change.event.reading);
    stages.record(change.root, change.snapshot.context.stage, change.snapshot.context.stage_since);
    push(change.root);
    // The receiver's card says "receiving cycle …" from this workspace's state: it changes with it.
    const receiver = change.snapshot.context.cycle?.receiver?.root;
    if (receiver != null && receiver !== change.root) push(receiver);
  };

  return {
    service,
    issueLink: () => sessions.issueLink(),
    gate(request, config) {
      const access = config.dashboard;
      if (access === undefined) return false;
      sessions.gate(request, access === 'session');
      return true;
    },
    register(app) {
      const unsubscribe = deps.registry.observe(observe);
      const refresh = setInterval(() => {
        if (live.size === 0) return;
        service
          .overview()
          .then((overview) => live.broadcast('overview', overview))
          .catch((error: unknown) => log.warn({ err: error }, 'could not refresh the dashboard'));
        live.ping();
      }, deps.refreshMs ?? 20_000);
      refresh.unref();
      // Before the server closes: open streams would otherwise hold the close up.
      app.addHook('preClose', async () => {
        clearInterval(refresh);
        unsubscribe();
        live.closeAll();
      });
      dashboardRoutes(app, {
        service,
        sessions,
        live,
        onStream: async (send) => send('overview', await service.overview()),
      });
    },
  };
}
