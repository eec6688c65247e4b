import { describe, expect, it } from 'vitest';
import { renderStatus } from '../../../daemon/cli/output.js';
import { statusView } from '../../../protocol/index.js';
import { Harness } from '../protocol/machine-harness.js';

describe('handoff status in a receiver checkout', () => {
  const h = new Harness();
  h.send({ type: 'NOW', reason: 'switching machines', wait: false });
  const view = statusView(h.snapshot, h.at);
  const cycle = view.cycle?.id ?? '';
  const line = (receiving: { home: string; checkout: string }, remote: string | null) => {
    const shown = {
      ...view,
      cycle: view.cycle && { ...view.cycle, remote: remote === null ? null : { name: remote, lease_head: null } },
      receiving: { cycle, ...receiving },
    };
    return renderStatus(shown, { color: false, nowMs: h.at, columns: 200 })
      .split('\n')
      .find((l) => l.startsWith('receiving'));
  };

  it('names where the source is: its checkout on this machine, or the remote the cycle came through', () => {
    expect(line({ home: '/src/app', checkout: '/src/laptop' }, null)).toBe(`receiving cycle ${cycle} from /src/app (this checkout, /src/laptop, took it over)`);
    // Taken over through a remote, the checkout is the cycle's home here: it is not its own source.
    expect(line({ home: '/src/laptop', checkout: '/src/laptop' }, 'origin')).toBe(
      `receiving cycle ${cycle} from the remote 'origin' (this checkout, /src/laptop, took it over)`,
    );
  });
});
