import { execFile } from 'node:child_process';
import { lstat, mkdir, readFile, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { Option, type Command } from 'commander';
import { failure, success, type Envelope } from '../../../protocol/index.js';
import { isErrno } from '../../store/errno.js';
import { isProcessAlive, readDaemonInfo, writeFileAtomic } from '../../store/index.js';
import { LAUNCH_AGENT_LABEL } from '../../service-unit/launch-agent.js';
import {
  describeStep,
  installPlan,
  renderService,
  serviceFile,
  serviceSpec,
  uninstallPlan,
  type ServiceFacts,
  type ServicePlatform,
  type ServiceStep,
} from '../../service-unit/service-plan.js';
import { SYSTEMD_UNIT } from '../../service-unit/systemd-unit.js';
import { AUTOSTART_LOG, cliEntry } from '../auto-start.js';
import { action, usage, type CommandContext } from '../context.js';
import { stopDaemon } from './daemon.js';

const TOOL_TIMEOUT_MS = 30_000;

interface ToolResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function runTool(argv: readonly string[]): Promise<ToolResult> {
  const [file = '', ...args] = argv;
  return new Promise((resolve) => {
    execFile(file, args, { encoding: 'utf8', timeout: TOOL_TIMEOUT_MS }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 127;
      resolve({ code, stdout, stderr: stderr === '' && error !== null ? error.message : stderr });
    });
  });
}

function platformOf(): ServicePlatform {
  if (process.platform === 'linux' || process.platform === 'darwin') return process.platform;
  return usage(
    `\`handoff service\` does not support ${process.platform}`,
    'it writes a systemd user unit (Linux) or a LaunchAgent (macOS); elsewhere run `handoff daemon` at login yourself',
  );
}

/** What the service manager says: whether it can be asked at all, whether the service runs, and its pid. */
interface ManagerView {
  readonly reachable: string | true;
  readonly loaded: boolean;
  readonly pid: number | null;
}

async function managerView(platform: ServicePlatform, uid: number): Promise<ManagerView> {
  if (platform === 'linux') {
    const shown = await runTool(['systemctl', '--user', 'show', '--property=ActiveState,MainPID', SYSTEMD_UNIT]);
    if (shown.code !== 0) return { reachable: `systemctl --user: ${shown.stderr.trim()}`, loaded: false, pid: null };
    const pid = Number(/^MainPID=(\d+)$/m.exec(shown.stdout)?.[1] ?? '0');
    return { reachable: true, loaded: /^ActiveState=(active|activating|reloading)$/m.test(shown.stdout), pid: pid > 0 ? pid : null };
  }
  const printed = await runTool(['launchctl', 'print', `gui/${uid}/${LAUNCH_AGENT_LABEL}`]);
  const pid = Number(/^\s*pid = (\d+)$/m.exec(printed.stdout)?.[1] ?? '0');
  return { reachable: true, loaded: printed.code === 0, pid: pid > 0 ? pid : null };
}

async function readIfPresent(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return null;
    throw error;
  }
}

/** A daemon serving the state dir that the service manager did not start. */
async function strayDaemon(stateDir: string, servicePid: number | null): Promise<number | null> {
  const info = await readDaemonInfo(stateDir);
  return info !== null && info.pid !== servicePid && isProcessAlive(info.pid) ? info.pid : null;
}

/** The file install would write now; refused when a value cannot be carried by it (service-plan.ts). */
function serviceContent(ctx: CommandContext, version: string, platform: ServicePlatform): string {
  const spec = serviceSpec({
    execPath: process.execPath,
    cli: cliEntry(),
    stateDir: ctx.stateDir,
    path: process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin',
    version,
    log: join(ctx.stateDir, AUTOSTART_LOG),
  });
  return renderService(platform, spec);
}

async function survey(ctx: CommandContext) {
  const platform = platformOf();
  const uid = process.getuid?.() ?? 0;
  const file = serviceFile(platform, homedir());
  const manager = await managerView(platform, uid);
  const missingStateDir = await lstat(ctx.stateDir).then(
    () => null,
    (error: unknown) => {
      if (isErrno(error, 'ENOENT')) return ctx.stateDir;
      throw error;
    },
  );
  const facts: ServiceFacts = {
    platform,
    uid,
    file,
    current: await readIfPresent(file),
    loaded: manager.loaded,
    managerReachable: manager.reachable === true,
    strayDaemon: await strayDaemon(ctx.stateDir, manager.pid),
    stateDir: missingStateDir,
  };
  return { facts, manager };
}

async function carryOut(ctx: CommandContext, steps: readonly ServiceStep[], data: Record<string, unknown>): Promise<Envelope> {
  const done: string[] = [];
  for (const step of steps) {
    if (step.kind === 'make_state_dir') {
      await mkdir(step.dir, { recursive: true, mode: 0o700 });
    } else if (step.kind === 'write') {
      await mkdir(dirname(step.file), { recursive: true });
      await writeFileAtomic(step.file, step.content, 0o644);
    } else if (step.kind === 'remove') {
      await unlink(step.file).catch((error: unknown) => {
        if (!isErrno(error, 'ENOENT')) throw error;
      });
    } else if (step.kind === 'stop_daemon') {
      const stopped = await stopDaemon(ctx);
      if (stopped.error !== undefined) return { ...stopped, data: { ...data, done } };
    } else {
      const result = await runTool(step.argv);
      if (result.code !== 0 && !step.may_fail) {
        return failure('service_failed', `\`${step.argv.join(' ')}\` exited with ${result.code}: ${result.stderr.trim()}`, failureHint(step, done), {
          ...data,
          done,
        });
      }
    }
    done.push(describeStep(step));
  }
  return success('ok', { ...data, done });
}

function failureHint(step: ServiceStep & { kind: 'run' }, done: readonly string[]): string {
  const written = done.find((line) => line.startsWith('write '));
  const tool =
    step.argv[0] === 'systemctl'
      ? 'a user systemd (`systemctl --user` needs a login session with its bus, e.g. not a container or plain sudo)'
      : 'launchd in your GUI session';
  return `${written === undefined ? '' : `${written.replace(/^write /, '')} is written; `}this needs ${tool}. Until then \`handoff daemon\` runs it, and any command starts one when none answers`;
}

const UNAVAILABLE_HINT =
  'nothing was written. Without a service, any handoff command starts the daemon when none answers (docs/running-at-login.md); to run it at every login anyway, start `handoff daemon` from your shell profile, or install from a login session that has a user systemd (`loginctl enable-linger $USER`, then log in again)';

function renderReport(data: { dry_run?: boolean; file: string; steps?: string[]; done?: string[]; content?: string }): string {
  if (data.dry_run === true) {
    const steps = data.steps ?? [];
    if (steps.length === 0) return `nothing to do: ${data.file} is installed, up to date and running`;
    return [...steps.map((s) => `would ${s}`), ...(data.content === undefined ? [] : [`--- ${data.file}`, data.content.trimEnd()])].join('\n');
  }
  const done = data.done ?? [];
  return done.length === 0 ? `nothing to do (${data.file})` : done.map((s) => `done: ${s}`).join('\n');
}

interface StatusData {
  platform: ServicePlatform;
  file: string;
  installed: boolean;
  up_to_date: boolean;
  manager: string;
  active: boolean;
  state_dir: string;
  daemon_outside_service: number | null;
}

function renderStatus(data: StatusData): string {
  return [
    `${data.platform === 'linux' ? 'systemd user unit' : 'LaunchAgent'}: ${data.file}`,
    `installed: ${data.installed ? (data.up_to_date ? 'yes' : 'yes, but not what `handoff service install` would write now (run it again)') : 'no'}`,
    `active: ${data.active ? 'yes' : 'no'}${data.manager === 'available' ? '' : ` (${data.manager})`}`,
    `state dir: ${data.state_dir}`,
    ...(data.daemon_outside_service === null ? [] : [`a daemon outside the service serves it: pid ${data.daemon_outside_service}`]),
  ].join('\n');
}

export function registerService(program: Command): void {
  // The unit names the version that wrote it: the program's own, set before commands register.
  const version = program.version() ?? 'unknown';
  const service = program.command('service').description('run the daemon at login: a systemd user unit (Linux) or a LaunchAgent (macOS) for this state dir');
  const dryRun = () => new Option('--dry-run', 'print exactly what would be written and run, and do nothing');
  service
    .command('install')
    .description(
      'write the unit (the absolute node and handoff of this install, the state dir, your PATH; output to <state dir>/autostart.log) and start it; idempotent',
    )
    .addOption(dryRun())
    .action(
      action(async (ctx, options: { dryRun?: boolean }) => {
        const content = serviceContent(ctx, version, platformOf());
        const { facts, manager } = await survey(ctx);
        const steps = installPlan(facts, content);
        const data = { platform: facts.platform, file: facts.file, state_dir: ctx.stateDir };
        if (options.dryRun === true)
          return success('ok', { ...data, dry_run: true, steps: steps.map(describeStep), ...(steps.some((s) => s.kind === 'write') && { content }) });
        // A unit no user systemd will ever start is not a temporary failure: refuse before writing it.
        if (manager.reachable !== true && steps.length > 0)
          return failure('service_unavailable', `no user systemd answers here (${manager.reachable})`, UNAVAILABLE_HINT, { ...data, done: [] });
        return carryOut(ctx, steps, data);
      }, renderReport),
    );
  service
    .command('uninstall')
    .description('stop the service and remove its file; idempotent')
    .addOption(dryRun())
    .action(
      action(async (ctx, options: { dryRun?: boolean }) => {
        const { facts } = await survey(ctx);
        const steps = uninstallPlan(facts);
        const data = { platform: facts.platform, file: facts.file, state_dir: ctx.stateDir };
        if (options.dryRun === true) return success('ok', { ...data, dry_run: true, steps: steps.map(describeStep) });
        return carryOut(ctx, steps, data);
      }, renderReport),
    );
  service
    .command('status')
    .description('whether the service is installed, up to date and active, and where its file is')
    .action(
      action(async (ctx) => {
        const content = serviceContent(ctx, version, platformOf());
        const { facts, manager } = await survey(ctx);
        const data: StatusData = {
          platform: facts.platform,
          file: facts.file,
          installed: facts.current !== null,
          up_to_date: facts.current === content,
          manager: manager.reachable === true ? 'available' : manager.reachable,
          active: facts.loaded,
          state_dir: ctx.stateDir,
          daemon_outside_service: facts.strayDaemon,
        };
        return success('ok', data);
      }, renderStatus),
    );
}
