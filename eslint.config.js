import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'daemon/generated/validators.js'] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  { languageOptions: { globals: globals.node } },
  {
    rules: {
      'no-empty': ['error', { allowEmptyCatch: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // The pure core must not reach for effects: no fs, net, clock, git, logger.
    files: ['protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: ['node:*', 'fs', 'net', 'http', 'child_process', 'pino', 'simple-git', 'chokidar', 'fastify', '../daemon/*', '../adapters/*'],
        },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'the core takes time from events' },
        { object: 'Math', property: 'random', message: 'the core takes entropy from events' },
      ],
    },
  },
  {
    // The CLI is a client: it shares protocol/, schemas/ and the state dir's files with the daemon, never the server's modules.
    files: ['daemon/cli/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            'fastify',
            'xstate',
            'chokidar',
            '**/http/**',
            '**/service.js',
            '**/workspaces/**',
            '**/takeover/**',
            '**/evacuation/**',
            '**/ingest/**',
            '**/compose-daemon.js',
          ],
        },
      ],
    },
  },
  {
    // A process's first ICU collation costs it 2–3 MB of resident memory for good (docs/performance/daemon.md).
    files: ['protocol/**/*.ts', 'adapters/**/*.ts', 'daemon/**/*.ts', 'schemas/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='localeCompare']",
          message: 'order names, ids and paths with byCodeUnits (protocol/code-unit-order.ts): the same in every locale, no ICU collator',
        },
      ],
    },
  },
  {
    // Adapters parse what they are handed: reading files, watching and spawning are the daemon's.
    files: ['adapters/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            'node:fs',
            'node:fs/*',
            'fs',
            'node:net',
            'net',
            'node:http',
            'http',
            'node:child_process',
            'child_process',
            'pino',
            'simple-git',
            'chokidar',
            'fastify',
            '**/daemon/**',
          ],
        },
      ],
    },
  },
);
