import type { CommanderError } from 'commander';
import { failure, type Envelope } from '../../protocol/envelope.js';

/**
 * commander's error, in the words every other error uses: what was wrong, then a hint that names
 * the command to run — a typo gets its suggestion, not the whole help.
 */
export function usageFailure(error: CommanderError, path: string, stray?: Stray): Envelope {
  // `handoff lease aquire` reaches the default subcommand (`show`) as an argument too many: it is a typo.
  if (error.code === 'commander.excessArguments' && stray !== undefined && stray.names.length > 0) {
    const near = nearest(stray.word, stray.names);
    return failure(
      'usage_error',
      `unknown command '${stray.word}' for \`${path}\``,
      near === null ? `\`${path}\` takes ${stray.names.join(', ')}` : `did you mean \`${path} ${near}\`? \`${path} --help\` lists what it takes`,
    );
  }
  const [first = error.message, ...rest] = error.message.split('\n');
  const message = first.replace(/^error: /, '');
  const suggestion = /\(Did you mean (.+)\?\)/.exec(rest.join(' '))?.[1];
  if (suggestion !== undefined) {
    const word = suggestion.startsWith('-') ? suggestion : `${path} ${suggestion}`;
    return failure('usage_error', message, `did you mean \`${word}\`? \`${path} --help\` lists what it takes`);
  }
  return failure('usage_error', message, `\`${path} --help\` says what it takes`);
}

/** The first word a command did not know, and the subcommands it does know. */
export interface Stray {
  readonly word: string;
  readonly names: readonly string[];
}

/** The known name within two edits of `word` (commander's own suggestion distance), or null. */
function nearest(word: string, names: readonly string[]): string | null {
  let best: { name: string; distance: number } | null = null;
  for (const name of names) {
    const distance = editDistance(word, name);
    if (distance <= 2 && (best === null || distance < best.distance)) best = { name, distance };
  }
  return best?.name ?? null;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const row = [i];
    for (let j = 1; j <= b.length; j += 1) {
      row[j] = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}
