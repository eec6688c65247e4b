import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempRepo } from '../../support/git.js';

describe('runValidation', () => {
  it('out of descriptors (EMFILE) the validation is recorded as failed to start, and the daemon process lives on', () => {
    const repo = tempRepo();
    const validate = fileURLToPath(new URL('../../../dist/daemon/evacuation/validation-command.js', import.meta.url));
    const script = `
      import { closeSync, openSync } from 'node:fs';
      const { runValidation } = await import(${JSON.stringify(validate)});
      const fds = [];
      for (;;) { try { fds.push(openSync('/dev/null', 'r')); } catch { break; } }
      // Two free descriptors: too few for the three pipes of the child.
      for (const fd of fds.splice(-2)) closeSync(fd);
      const result = await runValidation(${JSON.stringify(repo)}, 'true', 5000, () => Date.now());
      await new Promise((resolve) => setTimeout(resolve, 200));
      console.log(JSON.stringify(result));
    `;
    const child = spawnSync('sh', ['-c', `ulimit -n 256 && exec "${process.execPath}" --input-type=module -e "$0"`, script], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(child.status, child.stderr).toBe(0);
    const result = JSON.parse(child.stdout) as { status: string; exit_code: number; output_tail: string };
    expect(result.status).toBe('failed');
    expect(result.exit_code).toBe(127);
    expect(result.output_tail).toMatch(/could not start: .*(EMFILE|ENFILE)/);
  });
});
