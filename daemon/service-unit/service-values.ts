import { HandoffError } from '../../protocol/index.js';
import { DAEMON_NODE_FLAGS } from '../node-flags.js';
import type { ServiceSpec } from './service-plan.js';

/** C0 and C1 controls, DEL and the Unicode line breaks: a unit line ends at a newline, so a value holding one would add directives. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * A value no service file can carry is refused (usage_error) before anything is rendered or written:
 * quoting cannot keep a newline in PATH or in the state dir from ending its line of a systemd unit and
 * starting another directive (`ExecStartPre=`), nor make it a working value in a LaunchAgent.
 */
export function refuseControlCharacters(spec: ServiceSpec): void {
  const named: [string, string][] = [
    ['PATH', spec.path],
    ['the state dir (--state-dir or HANDOFF_STATE_DIR)', spec.stateDir],
    ['the log path', spec.log],
    ['the version', spec.version],
    ...spec.command.map((word, i): [string, string] => [
      i === 0 ? 'the node executable path' : i === 1 + DAEMON_NODE_FLAGS.length ? 'the handoff CLI path' : "the daemon's command",
      word,
    ]),
  ];
  for (const [what, value] of named) {
    const at = value.search(CONTROL);
    if (at >= 0)
      throw new HandoffError(
        'usage_error',
        `${what} holds a control character (U+${(value.codePointAt(at) ?? 0).toString(16).toUpperCase().padStart(4, '0')} at position ${at + 1}); a service file cannot carry it safely`,
        `remove it from ${what.replace(/ \(.*\)$/, '')}, then run \`handoff service install\` again; nothing was written`,
      );
  }
}
