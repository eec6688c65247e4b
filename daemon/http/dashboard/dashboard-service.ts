import { basename, dirname, join } from 'node:path';
import { compareUrgency, failure, isCycleId, statusView, success, urgencyRank, type Envelope, type StatusView } from '../../../protocol/index.js';
import { printable, printableDeep } from '../../../protocol/printable.js';
import { plainStatus, type PlainStatus } from '../../../protocol/status-words.js';
import type { Clock } from '../../clock.js';
import type { DaemonInfo } from '../../service.js';
import { NotRegularFileError, readRegularFile } from '../../store/regular-file.js';
import type { TakeoverService } from '../../takeover/index.js';
import { cycleRevisions, recordedCycles } from '../../takeover/index.js';
import { workspaceDir } from '../../workspaces/workspace-dir.js';
import type { WorkspaceRegistry } from '../../workspaces/registry.js';
import type { ReadingHistory, HistorySeries } from './history.js';
import { renderMarkdown } from './markdown.js';
import type { StageMark, StageMarks } from './stage-marks.js';

export interface WorkspaceCard {
  readonly root: string;
  readonly status: StatusView & { readonly receiving: ReturnType<TakeoverService['receiving']> };
  readonly words: PlainStatus;
  readonly history: readonly HistorySeries[];
  /** When the workspace entered each recent stage, oldest first: the timeline's markers. */
  readonly stages: readonly StageMark[];
  /** protocol/urgency.ts's rank (0 most urgent): the page orders cards by it, as the overview does. */
  readonly urgency: number;
  /** Cycle ids recorded in `.session-handoff/`, newest first. */
  readonly cycles: readonly string[];
}

export interface Overview {
  readonly now: string;
  readonly daemon: DaemonInfo;
  readonly workspaces: readonly WorkspaceCard[];
}

export interface DashboardDeps {
  readonly registry: WorkspaceRegistry;
  readonly takeover: TakeoverService;
  readonly history: ReadingHistory;
  readonly stages: StageMarks;
  readonly clock: Clock;
  readonly info: () => DaemonInfo;
}

/** A HANDOFF.md bigger than this is shown cut: the page is for scanning, the file is on disk. */
const HANDOFF_SHOWN_CHARS = 256 * 1024;

/** HANDOFF.md as it is on disk, or why it is not shown: a link or anything but a regular file is never followed. */
async function readHandoff(root: string, path: string): Promise<{ text: string | null; problem: string | null }> {
  try {
    return { text: (await readRegularFile(path, { within: workspaceDir(root) })).toString('utf8'), problem: null };
  } catch (error) {
    if (error instanceof NotRegularFileError) return { text: null, problem: `HANDOFF.md is not a regular file (${error.what}): it is not shown` };
    return {
      text: null,
      problem:
        (error as NodeJS.ErrnoException).code === 'ENOENT'
          ? 'HANDOFF.md is missing'
          : `HANDOFF.md cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    };
  }
}

/** What the dashboard shows, built from the registry and the records on disk; no rule lives here. */
export function createDashboardService(deps: DashboardDeps) {
  const { registry, clock } = deps;

  async function card(root: string): Promise<WorkspaceCard | null> {
    const workspace = registry.find(root);
    if (workspace === undefined) return null;
    const now = clock.now();
    const view = statusView(workspace.snapshot(), now);
    // For people's eyes: paths, reasons and agents' words with every control or bidi character escaped.
    return printableDeep({
      root,
      status: { ...view, receiving: deps.takeover.receiving(root) },
      words: plainStatus(view, now),
      history: deps.history.series(root),
      stages: deps.stages.of(root),
      urgency: urgencyRank(view),
      cycles: (await recordedCycles(root)).reverse(),
    });
  }

  async function overview(): Promise<Overview> {
    const roots = registry.all().map((w) => w.root);
    const cards = (await Promise.all(roots.map(card))).filter((c): c is WorkspaceCard => c !== null).sort((a, b) => compareUrgency(a.status, b.status));
    return { now: new Date(clock.now()).toISOString(), daemon: deps.info(), workspaces: cards };
  }

  return {
    card,
    overview,

    /** `GET /v1/workspaces`: every workspace the daemon knows, with its status and timeline. */
    async workspaces(): Promise<Envelope> {
      return success('workspaces', await overview());
    },

    /** Every HANDOFF.md of one cycle, rendered; only a known workspace and a well-formed cycle id are read. */
    async cycle(root: string, cycle: string): Promise<Envelope> {
      if (registry.find(root) === undefined) return failure('not_a_repository', `no workspace ${root} on this daemon`, 'pick a workspace the dashboard lists');
      if (!isCycleId(cycle) || !(await recordedCycles(root)).includes(cycle))
        return failure('unknown_cycle', `no cycle ${cycle} recorded in ${root}`, 'pick a cycle the dashboard lists');
      const revisions = await cycleRevisions(root, cycle);
      const documents = await Promise.all(
        revisions.map(async (revision) => {
          // manifest.json ↔ HANDOFF.md, manifest.2.json ↔ HANDOFF.2.md, in the same directory.
          const handoffPath = join(
            dirname(revision.path),
            basename(revision.path)
              .replace(/^manifest/, 'HANDOFF')
              .replace(/\.json$/, '.md'),
          );
          const { text, problem } = await readHandoff(root, handoffPath);
          const shown =
            text === null
              ? null
              : text.length > HANDOFF_SHOWN_CHARS
                ? `${text.slice(0, HANDOFF_SHOWN_CHARS)}\n\n…(cut; the whole file is ${handoffPath})`
                : text;
          return {
            leg: revision.leg,
            revision: revision.revision,
            current: revision.current,
            integrity: revision.integrity,
            problem: revision.problem === null ? null : printable(revision.problem),
            created_at: revision.created_at,
            handoff_path: printable(handoffPath),
            handoff_html: shown === null ? null : renderMarkdown(shown),
            handoff_problem: problem,
          };
        }),
      );
      return success('cycle', { cycle, workspace: root, revisions: documents });
    },
  };
}

export type DashboardService = ReturnType<typeof createDashboardService>;
