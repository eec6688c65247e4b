import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { completionScript, completionTree } from '../../../daemon/cli/commands/completion.js';
import { buildProgram, COMMAND_MODULES } from '../../../daemon/cli/program.js';

const root = completionTree(await buildProgram('0.0.0'));

/** What a real bash offers for the words typed so far (the last one is being completed). */
function complete(script: string, typed: readonly string[]): string[] {
  const words = ['handoff', ...typed].map((w) => `'${w}'`).join(' ');
  const run = spawnSync('bash', ['--norc', '-c', `${script}\nCOMP_WORDS=(${words}); COMP_CWORD=${typed.length}; _handoff; printf '%s\\n' "\${COMPREPLY[@]}"`], {
    encoding: 'utf8',
  });
  expect(run.stderr).toBe('');
  return run.stdout.split('\n').filter((line) => line !== '');
}

describe('handoff completion', () => {
  const bash = completionScript('bash', root);

  it('bash offers every command of the table at the top, and the subcommands of the one typed', () => {
    expect(complete(bash, ['']).filter((w) => !w.startsWith('-'))).toEqual(COMMAND_MODULES.flatMap((m) => m.names));
    expect(complete(bash, ['lea'])).toEqual(['lease']);
    expect(complete(bash, ['lease', ''])).toEqual(['show', 'acquire', 'renew', 'release', 'break', '--help']);
    // Past a global option and its value, and the flags of the command typed.
    expect(complete(bash, ['--repo', 'somewhere', 'service', 'in'])).toEqual(['install']);
    expect(complete(bash, ['now', '--no'])).toEqual(['--no-wait']);
    expect(complete(bash, ['completion', ''])).toEqual(['bash', 'zsh', 'fish', '--help']);
  });

  it('zsh loads the same function through bashcompinit; fish gets one guarded line per command and flag', () => {
    const zsh = completionScript('zsh', root);
    expect(zsh).toContain('autoload -U +X bashcompinit && bashcompinit\n');
    expect(zsh).toContain(bash.slice(bash.indexOf('_handoff() {')));
    const fish = completionScript('fish', root);
    expect(fish).toContain("complete -c handoff -n '__fish_use_subcommand' -a lease -d 'the execution lease'\n");
    expect(fish).toContain("complete -c handoff -n '__fish_seen_subcommand_from lease' -a acquire");
    expect(fish).toContain("complete -c handoff -n '__fish_seen_subcommand_from service; and __fish_seen_subcommand_from install' -l dry-run\n");
  });
});
