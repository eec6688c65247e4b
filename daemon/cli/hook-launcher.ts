import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { shellQuote } from '../../protocol/shell-quote.js';
import { ownPackage } from '../package-root.js';

const realOrNull = (path: string): string | null => {
  try {
    return realpathSync(path);
  } catch {
    // A dangling link or a path that vanished resolves to nothing: the caller reports it as such.
    return null;
  }
};

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Where a shell finds `name` on PATH, or null. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const path = join(dir, name);
    if (isExecutableFile(path)) return path;
  }
  return null;
}

/**
 * The leading words of a hook command up to `hook`, unquoted: single quotes as our installer writes
 * them, bare words otherwise. Null when the command is a shape this reader does not follow.
 */
export function launcherWords(command: string): string[] | null {
  const words: string[] = [];
  const word = /\s*(?:'((?:[^']|'\\'')*)'|([^\s'"\\$`;&|<>()]+))(?=\s|$)/y;
  while (word.lastIndex < command.length) {
    const match = word.exec(command);
    if (match === null) return null;
    const value = match[1] === undefined ? (match[2] ?? '') : match[1].replaceAll("'\\''", "'");
    if (value === 'hook') return words;
    words.push(value);
  }
  return null;
}

/** The shell line of spooledEventCommand: it starts no handoff, so only its shape is checked. */
const SPOOLED_EVENT =
  /^d='(?:[^']|'\\'')*'; t="\$d\/\.\$\$"; umask 077; mkdir -p "\$d" && cat > "\$t" && mv "\$t" "\$d\/\$\(date \+%s\)000-\$\(printf %012x \$\$\)\.json" # handoff hook claude-event$/;

/** The spool a spooling StopFailure line writes into, or null when the command is not one. */
export function spoolDirOf(command: string): string | null {
  if (!SPOOLED_EVENT.test(command)) return null;
  return launcherWords(`${command.slice(2, command.indexOf("'; t=") + 1)} hook`)?.[0] ?? null;
}

/** Why a hook command would not start handoff when its agent runs it, or null when it would. */
export function launcherProblem(command: string, env: NodeJS.ProcessEnv): string | null {
  if (SPOOLED_EVENT.test(command)) return null;
  const words = launcherWords(command);
  if (words === null || words.length === 0) return `cannot tell what \`${command}\` runs`;
  const [program = '', ...args] = words;
  const found = program.includes('/') ? (isExecutableFile(program) ? program : null) : findOnPath(program, env);
  if (found === null) return `${program} is not ${program.includes('/') ? 'an executable file' : 'on PATH'}`;
  // `node /…/main.js`: the script is what matters, and a moved or deleted clone leaves it dangling.
  const missing = args.find((arg) => isAbsolute(arg) && realOrNull(arg) === null);
  return missing === undefined ? null : `${missing} does not exist`;
}

export interface Launcher {
  /** What the hook commands start handoff with. */
  readonly command: string;
  /** Why it is not plain `handoff`, or a warning about a command the user chose. */
  readonly note: string | null;
}

/**
 * How the installed hooks start handoff. Plain `handoff` only when it is on PATH and leads to this
 * install; otherwise this node and this entry by absolute path (quoted), because an agent that runs
 * a hook it cannot start reports nothing: the guard would fail open without a word.
 */
export function hookLauncher(explicit: string | undefined, env: NodeJS.ProcessEnv, entry = ownPackage().cli): Launcher {
  if (explicit !== undefined) {
    const problem = launcherProblem(`${explicit} hook`, env);
    return { command: explicit, note: problem === null ? null : `--command ${explicit}: ${problem}; the agent's hooks will fail until it is` };
  }
  const onPath = findOnPath('handoff', env);
  const own = realOrNull(entry) ?? entry;
  if (onPath !== null && realOrNull(onPath) === own) return { command: 'handoff', note: null };
  const command = `${shellQuote(process.execPath)} ${shellQuote(own)}`;
  const why = onPath === null ? '`handoff` is not on PATH' : `\`handoff\` on PATH is another install (${onPath})`;
  return { command, note: `${why}: the hooks start this install directly, as ${command} (run \`npm link\` and install again for plain \`handoff\`)` };
}
