// Lint: typescript-eslint's recommended rules, plus the house rule that keeps workflow code
// deterministic: no Node built-ins and no activity implementations in workflows/.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  { ignores: ['node_modules/', '.tools/', '.tandem/', 'tmp/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { console: 'readonly', process: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', URL: 'readonly', fetch: 'readonly', AbortSignal: 'readonly', globalThis: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/no-empty-function': 'off',
    },
  },
  {
    files: ['workflows/**/*.ts', 'spec/**/*.ts', 'placement/**/*.ts'],
    ignores: ['spec/export-schema.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Workflow code runs in the deterministic sandbox: do I/O in an activity.' })),
          patterns: [
            { group: ['**/activities/*', '!**/activities/types.js'], allowTypeImports: true, message: 'Workflows may only `import type` from activities/ (call them through proxyActivities).' },
            { group: ['**/backends/*', '**/runtime/*', '**/workers/*', '**/sdk/*', '**/cli/*'], message: 'Workflow code may import only spec/, placement/ and @temporalio/workflow.' },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'setInterval', message: 'Use sleep() from @temporalio/workflow.' }],
      'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'Math.random is seeded by Temporal inside workflows, but keep randomness out of spec/ and placement/; use workflow APIs.' }],
    },
  },
);
