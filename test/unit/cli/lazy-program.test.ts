import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, COMMAND_MODULES } from '../../../daemon/cli/program.js';

const names = (program: Command) => program.commands.map((c) => c.name());

describe('the CLI imports only the module of the command it runs', () => {
  it('the table names exactly the commands each module registers', async () => {
    for (const module of COMMAND_MODULES) {
      const program = new Command('handoff');
      (await module.load())(program);
      expect(names(program)).toEqual(module.names);
    }
  });

  it('help, no command and an unknown command get every command, in the table order', async () => {
    const all = COMMAND_MODULES.flatMap((m) => m.names);
    for (const args of [[], ['--help'], ['--json'], ['nonsense'], ['help', 'status']]) {
      const program = await buildProgram('0.0.0', ['node', 'handoff', ...args]);
      expect(names(program), args.join(' ')).toEqual(all);
    }
    const help = (await buildProgram('0.0.0')).helpInformation();
    for (const name of all) expect(help).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
  });

  it('a command registers its module alone, past global options with values', async () => {
    expect(names(await buildProgram('0.0.0', ['node', 'handoff', 'status']))).toEqual(['status', 'signal']);
    expect(names(await buildProgram('0.0.0', ['node', 'handoff', '--repo', 'list', '--json', 'status', '--help']))).toEqual(['status', 'signal']);
    expect(names(await buildProgram('0.0.0', ['node', 'handoff', '--state-dir=/tmp/x', 'lease', 'show']))).toEqual(['lease']);
  });
});
