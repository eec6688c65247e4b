import { describe, expect, it } from 'vitest';
import { HandoffError } from '../../../protocol/index.js';
import { renderLaunchAgent } from '../../../daemon/service-unit/launch-agent.js';
import { renderService, serviceSpec } from '../../../daemon/service-unit/service-plan.js';
import { renderSystemdUnit } from '../../../daemon/service-unit/systemd-unit.js';

/** Issue 23, attack 6: a newline in PATH or in the state dir became extra systemd directives (and plist lines). */
const INJECTED = '\nExecStartPre=/bin/sh -c "touch /tmp/owned"\n';
const base = { execPath: '/usr/bin/node', cli: '/opt/handoff/dist/daemon/cli/main.js', stateDir: '/home/a/state', path: '/usr/bin:/bin', version: '9.9.9' };
const specWith = (edit: Partial<typeof base>) => {
  const input = { ...base, ...edit };
  return serviceSpec({ ...input, log: `${input.stateDir}/autostart.log` });
};

const refusal = (render: () => string): HandoffError => {
  try {
    render();
  } catch (error) {
    if (error instanceof HandoffError) return error;
    throw error;
  }
  throw new Error('rendered');
};

describe('service file values with control characters are refused, nothing rendered', () => {
  const renderers = { systemd: renderSystemdUnit, launchd: renderLaunchAgent } as const;
  for (const [manager, render] of Object.entries(renderers)) {
    it(`${manager}: a newline in PATH is refused by name (usage_error)`, () => {
      const error = refusal(() => render(specWith({ path: `/usr/bin${INJECTED}` })));
      expect(error.code).toBe('usage_error');
      expect(error.message).toMatch(/^PATH holds a control character \(U\+000A at position 9\)/);
      expect(error.hint).toMatch(/nothing was written/);
    });

    it(`${manager}: a newline in the state dir is refused by name`, () => {
      const error = refusal(() => render(specWith({ stateDir: `/home/a/st${INJECTED}` })));
      expect(error.code).toBe('usage_error');
      expect(error.message).toMatch(/^the state dir \(--state-dir or HANDOFF_STATE_DIR\) holds a control character/);
    });

    it(`${manager}: a carriage return, a tab, DEL, a C1 control or U+2028 anywhere is refused`, () => {
      for (const bad of ['\r', '\t', '\u007f', '\u0085', '\u2028', '\u0000']) {
        expect(refusal(() => render(specWith({ cli: `/opt/h${bad}/main.js` }))).message).toMatch(/^the handoff CLI path holds a control character/);
      }
    });
  }

  it('renderService refuses for either platform, and renders a clean spec as before', () => {
    for (const platform of ['linux', 'darwin'] as const) {
      expect(refusal(() => renderService(platform, specWith({ path: `a${INJECTED}` }))).code).toBe('usage_error');
      expect(renderService(platform, specWith({}))).toContain('/home/a/state');
    }
  });
});
