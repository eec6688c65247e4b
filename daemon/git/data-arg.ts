import { HandoffError, redactCredentials, type Code } from '../../protocol/index.js';

/**
 * A ref, remote name, URL or path that comes from data, checked before it reaches git's argv.
 * `--end-of-options` already keeps git from reading it as an option; a value that would be one
 * anywhere (git-lfs, a command without that marker) is refused outright.
 */
export function dataArg(value: string, what: string, code: Extract<Code, 'usage_error' | 'corrupt_record'> = 'usage_error'): string {
  if (value.startsWith('-')) {
    throw new HandoffError(
      code,
      `the ${what} '${redactCredentials(value).slice(0, 200)}' starts with '-', so git would read it as an option; refused`,
      `nothing was run; fix the ${what} (a ref, remote name or URL never starts with '-')`,
    );
  }
  if (value === '' || value.includes('\0')) {
    throw new HandoffError(code, `the ${what} is empty or holds a NUL byte; refused`, `nothing was run; fix the ${what}`);
  }
  return value;
}
