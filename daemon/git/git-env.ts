/**
 * The environment and configuration every git of the daemon runs with: built, not inherited, so
 * nothing in the daemon's own environment or the repository's config can make git prompt, run a
 * hook or the fsmonitor, or point it at another repository, config or program.
 */

/** ssh never asks a person: no passwords, passphrases or host-key questions; it fails instead. */
export const SSH_COMMAND = 'ssh -o BatchMode=yes -o ConnectTimeout=10';

/**
 * `-c` overrides before every subcommand. Hooks point at /dev/null (git finds no hook there);
 * the fsmonitor and any configured askpass are off; no background gc or maintenance is started;
 * no alternate-refs command runs.
 */
export const CONFIG_OVERRIDES: readonly string[] = [
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.askPass=',
  '-c',
  'credential.interactive=never',
  '-c',
  'gc.auto=0',
  '-c',
  'maintenance.auto=false',
  // A fetch would run this through the shell to list the refs of the repository's alternates (a
  // path in .git/objects/info/alternates): `true` lists none, so git negotiates without them.
  '-c',
  'core.alternateRefsCommand=true',
];

/**
 * The program git starts on the remote's side for each transport command. The repository's
 * `remote.<name>.uploadpack|receivepack` could name any command there (git runs it through the shell
 * for a local path or over ssh), and `-c` cannot outrank it: git keeps the first value it reads.
 * The command-line option does, so the layer passes git's own program on every such call.
 */
const PACK_PROGRAM: Readonly<Record<string, readonly string[]>> = {
  // A fetch that recursed into a submodule would run that submodule's own configured upload-pack.
  fetch: ['--upload-pack=git-upload-pack', '--no-recurse-submodules'],
  'ls-remote': ['--upload-pack=git-upload-pack'],
  push: ['--receive-pack=git-receive-pack'],
};

/** A pack program named by the caller: git takes the last one, so it would win over the pin. */
const CALLER_PACK = /^(--upload-pack|--receive-pack|--exec|-u)(=|$)|^-u./;

/**
 * args with git's own upload-pack or receive-pack named after the subcommand, when it talks to a
 * remote. simple-git's pack guard is lifted for these calls (it cannot tell the pin from a hostile
 * option), so a pack option among the caller's own options is refused here instead, as the guard would.
 */
export function pinPack(args: readonly string[]): { args: readonly string[]; pinned: boolean; refused?: string } {
  const pin = PACK_PROGRAM[args[0] ?? ''];
  if (pin === undefined) return { args, pinned: false };
  const end = args.indexOf('--end-of-options');
  const own = end === -1 ? args.slice(1) : args.slice(1, end);
  const named = own.find((arg) => CALLER_PACK.test(arg));
  if (named !== undefined) return { args, pinned: false, refused: `Use of ${named.split('=')[0]} is not permitted without enabling allowUnsafePack` };
  return { args: [args[0] ?? '', ...pin, ...args.slice(1)], pinned: true };
}

/** Set by the layer itself on every call. */
const LAYER_ENV = {
  // Outranks any protocol.<name>.allow of the repository's config, which could allow `ext::` (a
  // shell command as a URL, reached through a url.<base>.insteadOf) or `fd::`.
  GIT_ALLOW_PROTOCOL: 'file:git:http:https:ssh',
  // Empty, it outranks core.gitProxy, the command git would start to reach a git:// remote (one a
  // url.<base>.insteadOf can put in place of yours), and names none.
  GIT_PROXY_COMMAND: '',
  GIT_TERMINAL_PROMPT: '0',
  GIT_SSH_COMMAND: SSH_COMMAND,
  GIT_OPTIONAL_LOCKS: '0',
  GCM_INTERACTIVE: 'never',
  LC_ALL: 'C',
} as const;

/** What a caller of the layer may add: a scratch index and the identity of the daemon's commits. */
const CALLER_ENV = new Set([
  'GIT_INDEX_FILE',
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
  'GIT_COMMITTER_DATE',
]);

/**
 * Inherited names dropped besides every GIT_*: programs git or ssh would start to ask a person or
 * to page (simple-git also refuses to run with them set).
 */
const DROPPED = new Set(['SSH_ASKPASS', 'EDITOR', 'VISUAL', 'PAGER', 'PREFIX']);

const isGitName = (name: string) => name.toUpperCase().startsWith('GIT_');

/**
 * The environment for one git call: the inherited one without any GIT_* (GIT_CONFIG_PARAMETERS,
 * GIT_EXEC_PATH, GIT_SSH, GIT_PROXY_COMMAND, GIT_DIR, ... all go), plus the layer's own settings
 * and the caller's few allowed ones. Built per call: 0.13 ms (process.env is read name by name) of a
 * git call's 8–14 ms, and no change to the daemon's environment is missed.
 */
export function gitEnv(extra: Readonly<Record<string, string>> = {}, inherited: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(inherited)) {
    if (value !== undefined && !isGitName(name) && !DROPPED.has(name.toUpperCase())) env[name] = value;
  }
  for (const name of Object.keys(extra)) {
    // A programming error, not data: the daemon's own callers name these.
    if (!CALLER_ENV.has(name)) throw new Error(`git layer: the caller may not set ${name}`);
  }
  // A measurement aid, named outside GIT_* so no inherited git setting can set it: the benchmarks
  // count the daemon's git processes from trace2 events.
  const trace = inherited['HANDOFF_GIT_TRACE2_EVENT'];
  return { ...env, ...LAYER_ENV, ...(trace ? { GIT_TRACE2_EVENT: trace } : {}), ...extra };
}

/** The GIT_* names an environment from gitEnv holds: simple-git's environment guard must let them through. */
export function gitNames(env: Readonly<Record<string, string>>): string[] {
  return Object.keys(env).filter(isGitName);
}
