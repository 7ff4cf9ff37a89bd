// The house rule for workflows/ is enforced by lint: prove it bites.
import { ESLint } from 'eslint';

const eslint = new ESLint({ cwd: process.cwd() });
const lint = async (code: string, filePath: string) => (await eslint.lintText(code, { filePath }))[0]!.messages.map((m) => m.message);

describe('workflow sandbox lint rule', () => {
  test('rejects Node built-ins in workflows/', async () => {
    expect(await lint("import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n", 'workflows/bad.ts')).toEqual([expect.stringMatching(/deterministic sandbox/)]);
    expect(await lint("import * as cp from 'child_process';\nexport const x = cp;\n", 'workflows/bad.ts')).toEqual([expect.stringMatching(/deterministic sandbox/)]);
  });

  test('rejects activity implementations but allows `import type`', async () => {
    expect(await lint("import { createActivities } from '../activities/index.js';\nexport const x = createActivities;\n", 'workflows/bad.ts')).toEqual([expect.stringMatching(/only `import type`/)]);
    expect(await lint("import type { createActivities } from '../activities/index.js';\nexport type X = typeof createActivities;\n", 'workflows/ok.ts')).toEqual([]);
  });

  test('rejects backends in workflows/ and leaves activities/ free to use Node', async () => {
    expect(await lint("import { LocalJobBackend } from '../backends/local-jobs.js';\nexport const x = LocalJobBackend;\n", 'workflows/bad.ts')).toHaveLength(1);
    expect(await lint("import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n", 'activities/ok.ts')).toEqual([]);
  });
});
