import { join } from 'node:path';
import { DAEMON_NODE_FLAGS } from '../node-flags.js';
import { LAUNCH_AGENT_LABEL, renderLaunchAgent } from './launch-agent.js';
import { renderSystemdUnit, SYSTEMD_UNIT } from './systemd-unit.js';

/**
 * What `handoff service install|uninstall` writes and runs, decided from what is there now: pure,
 * so `--dry-run` prints exactly the steps a real run takes, and the tests read them.
 */

export type ServicePlatform = 'linux' | 'darwin';

/** How the daemon is started: the absolute node and CLI of this very install, and where it writes. */
export interface ServiceSpec {
  readonly version: string;
  readonly command: readonly string[];
  readonly stateDir: string;
  readonly path: string;
  readonly log: string;
}

export function serviceSpec(input: { execPath: string; cli: string; stateDir: string; path: string; version: string; log: string }): ServiceSpec {
  return {
    version: input.version,
    command: [input.execPath, ...DAEMON_NODE_FLAGS, input.cli, 'daemon', '--state-dir', input.stateDir],
    stateDir: input.stateDir,
    path: input.path,
    log: input.log,
  };
}

export function serviceFile(platform: ServicePlatform, home: string): string {
  return platform === 'linux' ? join(home, '.config', 'systemd', 'user', SYSTEMD_UNIT) : join(home, 'Library', 'LaunchAgents', `${LAUNCH_AGENT_LABEL}.plist`);
}

export function renderService(platform: ServicePlatform, spec: ServiceSpec): string {
  return platform === 'linux' ? renderSystemdUnit(spec) : renderLaunchAgent(spec);
}

export type ServiceStep =
  /** The unit appends the daemon's output to a file in the state dir: it must exist first (0700). */
  | { readonly kind: 'make_state_dir'; readonly dir: string }
  | { readonly kind: 'write'; readonly file: string; readonly content: string }
  | { readonly kind: 'remove'; readonly file: string }
  /** A daemon that runs outside the service holds the state dir: stopped, so the service's own can start. */
  | { readonly kind: 'stop_daemon'; readonly pid: number }
  /** `may_fail`: a step whose failure means "nothing to undo" (bootout of an agent that is not loaded). */
  | { readonly kind: 'run'; readonly argv: readonly string[]; readonly may_fail: boolean };

/** What is there now, as `handoff service` found it. */
export interface ServiceFacts {
  readonly platform: ServicePlatform;
  readonly uid: number;
  readonly file: string;
  /** The file's content, or null when there is none. */
  readonly current: string | null;
  /** The service manager has the service loaded (launchd) or running (systemd). */
  readonly loaded: boolean;
  /** Whether the service manager answers here (no user systemd in a container or a plain sudo shell). */
  readonly managerReachable: boolean;
  /** The pid of a daemon serving the state dir that is not the service's, or null. */
  readonly strayDaemon: number | null;
  /** The state dir, or null when it does not exist yet. */
  readonly stateDir: string | null;
}

const run = (argv: readonly string[], may_fail = false): ServiceStep => ({ kind: 'run', argv, may_fail });
const systemctl = (...args: string[]): ServiceStep => run(['systemctl', '--user', ...args]);

/** Install is idempotent: an unchanged, running service is left as it is. */
export function installPlan(facts: ServiceFacts, content: string): ServiceStep[] {
  const changed = facts.current !== content;
  if (!changed && facts.loaded && facts.strayDaemon === null) return [];
  const steps: ServiceStep[] = changed ? [{ kind: 'write', file: facts.file, content }] : [];
  if (facts.stateDir !== null) steps.unshift({ kind: 'make_state_dir', dir: facts.stateDir });
  if (facts.strayDaemon !== null) steps.push({ kind: 'stop_daemon', pid: facts.strayDaemon });
  if (facts.platform === 'linux') {
    if (changed) steps.push(systemctl('daemon-reload'));
    // restart starts a stopped unit and brings a running one onto the new file.
    steps.push(systemctl('enable', SYSTEMD_UNIT), systemctl(changed || facts.loaded ? 'restart' : 'start', SYSTEMD_UNIT));
    return steps;
  }
  const domain = `gui/${facts.uid}`;
  if (facts.loaded) steps.push(run(['launchctl', 'bootout', `${domain}/${LAUNCH_AGENT_LABEL}`], true));
  steps.push(run(['launchctl', 'bootstrap', domain, facts.file]));
  return steps;
}

/** Uninstall stops the service and removes its file; with nothing installed it does nothing. */
export function uninstallPlan(facts: ServiceFacts): ServiceStep[] {
  if (facts.current === null && !facts.loaded) return [];
  if (facts.platform === 'linux') {
    // No user systemd answers: nothing can be running under it, the file is all there is to remove.
    if (!facts.managerReachable) return facts.current === null ? [] : [{ kind: 'remove', file: facts.file }];
    return [
      systemctl('disable', '--now', SYSTEMD_UNIT),
      ...(facts.current === null ? [] : [{ kind: 'remove', file: facts.file } as const]),
      systemctl('daemon-reload'),
    ];
  }
  return [
    ...(facts.loaded ? [run(['launchctl', 'bootout', `gui/${facts.uid}/${LAUNCH_AGENT_LABEL}`], true)] : []),
    ...(facts.current === null ? [] : [{ kind: 'remove', file: facts.file } as const]),
  ];
}

/** One line a person reads: what `--dry-run` prints, and what a real run reports it did. */
export function describeStep(step: ServiceStep): string {
  switch (step.kind) {
    case 'make_state_dir':
      return `create the state dir ${step.dir} (0700)`;
    case 'write':
      return `write ${step.file}`;
    case 'remove':
      return `remove ${step.file}`;
    case 'stop_daemon':
      return `stop the daemon pid ${step.pid} (it runs outside the service; the service's daemon takes over)`;
    case 'run':
      return `run ${step.argv.join(' ')}${step.may_fail ? ' (a failure here means it was not loaded)' : ''}`;
  }
}
