// loadPipelineSpec reads a spec file once: a pipe (`tandem validate <(...)`) used to be read twice —
// first for the Argo-manifest check, then again, empty, for the spec — and an Argo manifest is named
// as one (with where it goes) by the SDK too, not only by `tandem validate`.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadPipelineSpec } from '../../../sdk/client.js';
import { tempDir } from '../../helpers.js';

/** A FIFO with `text` written into it once (what a shell's `<(...)` gives). */
async function fifoOf(text: string): Promise<string> {
  const path = join(tempDir('load-spec-fifo'), 'spec.fifo');
  await new Promise<void>((resolve, reject) => spawn('mkfifo', [path]).on('exit', (c) => (c === 0 ? resolve() : reject(new Error(`mkfifo ${c}`)))));
  const writer = spawn('sh', ['-c', 'cat > "$1"', 'sh', path], { stdio: ['pipe', 'ignore', 'ignore'] });
  writer.stdin.end(text);
  return path;
}

const spec = 'name: piped\nstages:\n  train: { steps: 100 }\n';
const argo = 'apiVersion: argoproj.io/v1alpha1\nkind: WorkflowTemplate\nmetadata: { name: t }\nspec:\n  entrypoint: main\n';

test('a spec from a pipe is read once and parses', async () => {
  expect((await loadPipelineSpec(await fifoOf(spec))).name).toBe('piped');
});

test('an Argo manifest is refused as one, from a file or a pipe, naming where it goes', async () => {
  const file = join(tempDir('load-spec-argo'), 'wf.yaml');
  writeFileSync(file, argo);
  await expect(loadPipelineSpec(file)).rejects.toThrow(`${file} is an Argo Workflows manifest (apiVersion argoproj.io/v1alpha1, kind WorkflowTemplate), not a Tandem pipeline spec: check it with \`tandem argo lint ${file}\``);
  await expect(loadPipelineSpec(await fifoOf(argo))).rejects.toThrow(/is an Argo Workflows manifest .*kind WorkflowTemplate/);
});
