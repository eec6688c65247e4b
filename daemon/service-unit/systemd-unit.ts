import type { ServiceSpec } from './service-plan.js';
import { refuseControlCharacters } from './service-values.js';

/** The unit's name: one per user, whatever the state dir (the unit names it). */
export const SYSTEMD_UNIT = 'session-handoff.service';

/** `%` starts a specifier in every unit setting; written `%%` it is a percent sign. */
const specifierSafe = (text: string): string => text.replaceAll('%', '%%');

/** One ExecStart word, double-quoted: `\` and `"` escaped, `$` doubled (no variable expansion), `%` doubled. */
export const execWord = (word: string): string => `"${specifierSafe(word.replaceAll('\\', '\\\\').replaceAll('"', '\\"')).replaceAll('$', '$$$$')}"`;

/** One `Environment=` assignment, quoted as a whole so spaces in the value are kept. */
const environment = (name: string, value: string): string =>
  `Environment="${specifierSafe(`${name}=${value}`.replaceAll('\\', '\\\\').replaceAll('"', '\\"'))}"`;

/**
 * The systemd user unit `handoff service install` writes: the absolute node and CLI, the state dir
 * both as an argument and in the environment (so the chained commands agree), the installing
 * shell's PATH (a unit does not read a profile; the drain's validation command and git need it), and
 * the daemon's output appended to the state dir.
 */
export function renderSystemdUnit(spec: ServiceSpec): string {
  refuseControlCharacters(spec);
  return [
    `# Written by \`handoff service install\` (session-handoff ${spec.version}); \`handoff service uninstall\` removes it.`,
    '# Edits are replaced at the next install. See docs/running-at-login.md.',
    '[Unit]',
    'Description=session-handoff daemon: watches coding-agent quota telemetry and guards the execution lease',
    '',
    '[Service]',
    'Type=simple',
    environment('HANDOFF_STATE_DIR', spec.stateDir),
    environment('PATH', spec.path),
    `ExecStart=${spec.command.map(execWord).join(' ')}`,
    `StandardOutput=append:${specifierSafe(spec.log)}`,
    `StandardError=append:${specifierSafe(spec.log)}`,
    '# SIGTERM stops it cleanly (journal closed, daemon.json removed), as `handoff daemon stop` does.',
    'KillSignal=SIGTERM',
    'TimeoutStopSec=30',
    'Restart=on-failure',
    'RestartSec=5',
    '# 64 usage, 65 invalid config, 77 insecure state dir: a person must fix these. 75: another daemon',
    '# (say one a command started) serves the state dir already.',
    'RestartPreventExitStatus=64 65 75 77',
    'UMask=0077',
    'NoNewPrivileges=yes',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}
