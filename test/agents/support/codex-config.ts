import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Codex CLI's config.toml in a scene's HOME: the Responses API of the loopback mock as its only
 * provider (the key is a placeholder the mock ignores), no update check, no analytics, no feedback —
 * nothing leaves loopback.
 */
export function writeCodexMockConfig(home: string, mockUrl: string): void {
  mkdirSync(join(home, '.codex'));
  writeFileSync(
    join(home, '.codex', 'config.toml'),
    [
      'model = "gpt-5-codex"',
      'model_provider = "mock"',
      'check_for_update_on_startup = false',
      '[model_providers.mock]',
      'name = "mock"',
      `base_url = "${mockUrl}/v1"`,
      'wire_api = "responses"',
      'env_key = "MOCK_API_KEY"',
      '[analytics]',
      'enabled = false',
      '[feedback]',
      'enabled = false',
      '',
    ].join('\n'),
  );
}
