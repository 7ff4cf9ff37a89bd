// Argo v3.x documents real Argo (v3.7.9, the controller measured here) accepts and Argo v4's schema,
// the one shipped, would refuse: a parameter value that is a list or mapping (Argo's AnyString
// decoder reads it as ""), and synchronization's single `mutex` / `semaphore` (deprecated since v3.6,
// still in v3.7.9's examples: synchronization-*-legacy.yaml).
import { lintText } from '../../../argo/lint/validate.js';
import { syncLocks } from '../../../workflows/argo/sync.js';

const doc = (spec: string) => `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: v3-}
spec:
  entrypoint: main
${spec}
  templates:
  - name: main
    inputs: {parameters: [{name: files, default: {a: 1}}, {name: pick, enum: [x, [y]]}]}
    container: {image: alpine, command: [echo, "{{inputs.parameters.files}}"]}
`;

test('a list or mapping where a parameter value goes is read as "" with a note at its line, not refused', () => {
  const r = lintText(doc('  arguments: {parameters: [{name: files, value: []}, {name: pick, value: x}]}'), 'v3.yaml');
  expect(r.issues).toEqual([]);
  expect(r.notes.map(({ line, path, message }) => ({ line, path, message }))).toEqual([
    { line: 6, path: 'spec.arguments.parameters.files.value', message: 'a list, not a string: Argo reads it as "" (an empty string), and so does Tandem' },
    { line: 9, path: 'templates.main.inputs.parameters.files.default', message: 'a mapping, not a string: Argo reads it as "" (an empty string), and so does Tandem' },
    { line: 9, path: 'templates.main.inputs.parameters.pick.enum[1]', message: 'a list, not a string: Argo reads it as "" (an empty string), and so does Tandem' },
  ]);
  const spec = r.documents[0]!.value.spec as { arguments: { parameters: { value: unknown }[] } };
  expect(spec.arguments.parameters[0]!.value).toBe('');
  // Scalars stay as they are (numbers and booleans were accepted before).
  expect(spec.arguments.parameters[1]!.value).toBe('x');
});

test('a plugin template\'s own "parameters" are the plugin\'s, not Argo\'s: left alone', () => {
  const text = doc('').replace('    container: {image: alpine, command: [echo, "{{inputs.parameters.files}}"]}', '    plugin: {slurm: {parameters: [{value: [1, 2]}]}}');
  const r = lintText(text, 'v3.yaml');
  expect(r.notes.map((n) => n.path)).not.toContain(expect.stringContaining('plugin'));
  const main = (r.documents[0]!.value.spec as { templates: { plugin?: { slurm: { parameters: { value: unknown }[] } } }[] }).templates[0]!;
  expect(main.plugin!.slurm.parameters[0]!.value).toEqual([1, 2]);
});

test('synchronization.mutex and .semaphore (one lock each, Argo v3.x) lint and take the same locks as mutexes / semaphores', () => {
  const legacy = lintText(doc('  synchronization: {mutex: {name: m}}').replace('    inputs:', '    synchronization: {semaphore: {configMapKeyRef: {name: cm, key: k}}}\n    inputs:'), 'legacy.yaml');
  expect(legacy.issues).toEqual([]);
  expect(syncLocks({ mutex: { name: 'm' } }, 'ns')).toEqual(syncLocks({ mutexes: [{ name: 'm' }] }, 'ns'));
  expect(syncLocks({ semaphore: { configMapKeyRef: { name: 'cm', key: 'k' } } }, 'ns')).toEqual(syncLocks({ semaphores: [{ configMapKeyRef: { name: 'cm', key: 'k' } }] }, 'ns'));
  // Still strict: a misspelt field is refused.
  expect(lintText(doc('  synchronization: {mutexx: {name: m}}'), 'typo.yaml').issues.map((i) => i.message)).toEqual(['unknown field "mutexx"']);
});
