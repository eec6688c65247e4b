import type { ServiceSpec } from './service-plan.js';
import { refuseControlCharacters } from './service-values.js';

/** The LaunchAgent's label, and its file name under ~/Library/LaunchAgents. */
export const LAUNCH_AGENT_LABEL = 'dev.session-handoff';

const xml = (text: string): string =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&apos;');
const string = (text: string): string => `<string>${xml(text)}</string>`;

/**
 * The LaunchAgent `handoff service install` writes on macOS: started at login (RunAtLoad), started
 * again when it exits with a failure (KeepAlive/SuccessfulExit false; launchd throttles it), the
 * same program, state dir, PATH and log as the systemd unit.
 */
export function renderLaunchAgent(spec: ServiceSpec): string {
  refuseControlCharacters(spec);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    `<!-- Written by \`handoff service install\` (session-handoff ${xml(spec.version)}); \`handoff service uninstall\` removes it. -->`,
    '<plist version="1.0">',
    '<dict>',
    `  <key>Label</key>${string(LAUNCH_AGENT_LABEL)}`,
    '  <key>ProgramArguments</key>',
    '  <array>',
    ...spec.command.map((word) => `    ${string(word)}`),
    '  </array>',
    '  <key>EnvironmentVariables</key>',
    '  <dict>',
    `    <key>HANDOFF_STATE_DIR</key>${string(spec.stateDir)}`,
    `    <key>PATH</key>${string(spec.path)}`,
    '  </dict>',
    '  <key>RunAtLoad</key><true/>',
    '  <key>KeepAlive</key>',
    '  <dict>',
    '    <key>SuccessfulExit</key><false/>',
    '  </dict>',
    '  <key>ProcessType</key><string>Background</string>',
    `  <key>StandardOutPath</key>${string(spec.log)}`,
    `  <key>StandardErrorPath</key>${string(spec.log)}`,
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
}
