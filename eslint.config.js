// Lint: typescript-eslint's recommended rules, plus the house rules (ARCHITECTURE.md): code that runs in
// the workflow sandbox (workflows/, contract/, placement/, argo/lang/) imports no Node built-ins and no
// I/O layer; argo/ (the language and the lint pass) imports neither workflows/ nor activities/.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  { ignores: ['node_modules/', '.tools/', '.tandem/', 'tmp/', 'coverage/', 'dist/'] },
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
    files: ['workflows/**/*.ts', 'contract/**/*.ts', 'placement/**/*.ts', 'argo/lang/**/*.ts'],
    ignores: ['contract/export-schema.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Workflow code runs in the deterministic sandbox: do I/O in an activity.' })),
          patterns: [
            { group: ['**/activities/*', '!**/activities/types.js'], allowTypeImports: true, message: 'Workflows may only `import type` from activities/ (call them through proxyActivities).' },
            { group: ['**/backends/*', '**/programs/*', '**/workers/*', '**/sdk/*', '**/cli/*'], message: 'Workflow code may import only contract/, placement/, argo/lang/ and @temporalio/workflow.' },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'setInterval', message: 'Use sleep() from @temporalio/workflow.' }],
      'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'Math.random is seeded by Temporal inside workflows, but keep randomness out of contract/, placement/ and argo/lang/; use workflow APIs.' }],
    },
  },
  {
    // The Argo language and lint pass stand below the interpreter and the activities that use them.
    files: ['argo/**/*.ts'],
    ignores: ['argo/lang/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/workflows/*', '**/workflows/**', '**/activities/*', '**/activities/**'], message: 'argo/ may not import workflows/ or activities/: move the shared piece into argo/.' }] },
      ],
    },
  },
);
