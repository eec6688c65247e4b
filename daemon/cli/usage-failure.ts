import type { CommanderError } from 'commander';
import { failure, type Envelope } from '../../protocol/index.js';

/**
 * commander's error, in the words every other error uses: what was wrong, then a hint that names
 * the command to run — a typo gets its suggestion, not the whole help.
 */
export function usageFailure(error: CommanderError, path: string): Envelope {
  const [first = error.message, ...rest] = error.message.split('\n');
  const message = first.replace(/^error: /, '');
  const suggestion = /\(Did you mean (.+)\?\)/.exec(rest.join(' '))?.[1];
  if (suggestion !== undefined) {
    const word = suggestion.startsWith('-') ? suggestion : `${path} ${suggestion}`;
    return failure('usage_error', message, `did you mean \`${word}\`? \`${path} --help\` lists what it takes`);
  }
  return failure('usage_error', message, `\`${path} --help\` says what it takes`);
}
