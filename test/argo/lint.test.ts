// The Argo loader + schema + semantic pass: golden invalid fixtures (path, line, message), Argo's
// own examples accepted, and the speed budget for validating all of them.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { lintFile, lintText, Library } from '../../argo/lint/validate.js';
import { warmSchema } from '../../argo/lint/schema.js';

const INVALID = join(process.cwd(), 'test/argo/invalid');
const EXAMPLES = join(process.cwd(), '../shared/data/argo-examples');
const golden = JSON.parse(readFileSync(join(INVALID, 'golden.json'), 'utf8')) as Record<string, { line: number; path: string; message: string }[]>;

describe('argo lint', () => {
  test.each(readdirSync(INVALID).filter((f) => f.endsWith('.yaml')))('golden invalid fixture %s', (file) => {
    const r = lintFile(join(INVALID, file));
    expect(r.issues.map(({ line, path, message }) => ({ line, path, message }))).toEqual(golden[file]);
  });

  test('every golden fixture file has an expectation', () => {
    expect(Object.keys(golden).sort()).toEqual(readdirSync(INVALID).filter((f) => f.endsWith('.yaml')).sort());
  });

  test('accepts an integer where Argo types IntOrString/AnyString as string', () => {
    const text = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: ints-}
spec:
  entrypoint: main
  arguments: {parameters: [{name: n, value: 3}]}
  templates:
  - name: main
    retryStrategy: {limit: 2}
    container: {image: alpine, command: [echo, "{{workflow.parameters.n}}"]}
`;
    expect(lintText(text, 'ints.yaml').issues).toEqual([]);
  });

  test('a YAML syntax error names its line', () => {
    const r = lintText('apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nspec: [\n', 'broken.yaml');
    expect(r.issues.length).toBeGreaterThan(0);
    expect(r.issues[0]!.line).toBeGreaterThanOrEqual(3);
  });

  test('a missing workflow argument and an unknown -p parameter are reported', () => {
    const text = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: args-}
spec:
  entrypoint: main
  arguments: {parameters: [{name: msg}]}
  templates:
  - name: main
    container: {image: alpine, command: [echo, "{{workflow.parameters.msg}}"]}
`;
    // A submission needs the value; a lint does not (Argo: allowEmptyValues = ctx.Lint), as a compiled
    // Kubeflow pipeline declares its arguments bare and has them supplied when it is run.
    expect(lintText(text, 'a.yaml', { submit: true }).issues.map((i) => i.message)).toEqual(['spec.arguments.parameters.msg.value is required: supply it at submission (tandem argo submit -p msg=<value>)']);
    expect(lintText(text, 'a.yaml').issues).toEqual([]);
    expect(lintText(text, 'a.yaml', { parameters: { msg: 'hi' }, submit: true }).issues).toEqual([]);
    expect(lintText(text, 'a.yaml', { parameters: { msg: 'hi', nope: '1' }, submit: true }).issues.map((i) => i.message)).toEqual([expect.stringMatching(/unknown workflow parameter "nope"/)]);
  });

  // How fast lint is belongs to bench/ (npm run argo:conformance prints it), never to a test.
  test("Argo's own examples: ≥ 95% accepted", () => {
    const files: string[] = [];
    const walk = (d: string) => readdirSync(d, { withFileTypes: true }).forEach((e) => (e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.yaml') && files.push(join(d, e.name))));
    walk(EXAMPLES);
    warmSchema();
    const library = new Library().addDirectory(EXAMPLES);
    const rejected = files.filter((f) => lintFile(f, { library }).issues.length > 0);
    expect(files.length).toBeGreaterThan(140);
    expect(rejected.map((f) => f.slice(EXAMPLES.length + 1))).toEqual(['testvolume.yaml']); // a PersistentVolumeClaim, not an Argo object
  });
});
