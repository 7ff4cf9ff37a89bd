// spec.templateDefaults as Argo's controller applies it (mergedTemplateDefaultsInto: a strategic merge
// of each template over the defaults) and as its validation reads it (an image may come from the
// defaults). Before argo/lang/template-defaults.ts Tandem ignored the field: a default retryStrategy
// or timeout never applied, and a container relying on the default image failed lint.
import { withTemplateDefaults } from '../../../argo/lang/template-defaults.js';
import { Library, lintText } from '../../../argo/lint/validate.js';
import { resolveWorkflow } from '../../../argo/resolve.js';
import type { Json } from '../../../argo/lang/types.js';

test('the template wins field by field; maps merge deeply; keyed lists merge by their key; other lists are replaced', () => {
  const defaults = {
    timeout: '30s',
    retryStrategy: { limit: '2', retryPolicy: 'Always' },
    container: { image: 'alpine:3', command: ['sh', '-c'], env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }], resources: { limits: { cpu: '1' } }, volumeMounts: [{ name: 'v', mountPath: '/data' }] },
    script: { image: 'python:3' },
    volumes: [{ name: 'v', emptyDir: {} }],
  };
  const t = { name: 'c', retryStrategy: { limit: '5' }, container: { args: ['echo hi'], command: ['bash', '-c'], env: [{ name: 'B', value: 'mine' }, { name: 'C', value: '3' }], resources: { limits: { memory: '1Gi' } } }, volumes: [{ name: 'w', emptyDir: {} }] };
  expect(withTemplateDefaults(t, defaults)).toEqual({
    name: 'c',
    timeout: '30s',
    retryStrategy: { limit: '5', retryPolicy: 'Always' },
    container: {
      image: 'alpine:3',
      command: ['bash', '-c'],
      args: ['echo hi'],
      env: [{ name: 'A', value: '1' }, { name: 'B', value: 'mine' }, { name: 'C', value: '3' }],
      resources: { limits: { cpu: '1', memory: '1Gi' } },
      volumeMounts: [{ name: 'v', mountPath: '/data' }],
    },
    // a script default does not reach a container template
    volumes: [{ name: 'v', emptyDir: {} }, { name: 'w', emptyDir: {} }],
  });
  expect(t.container.env).toHaveLength(2); // inputs untouched
  expect(withTemplateDefaults({ name: 's', steps: [] }, defaults)).toEqual({ name: 's', steps: [], timeout: '30s', retryStrategy: { limit: '2', retryPolicy: 'Always' }, volumes: [{ name: 'v', emptyDir: {} }] });
  expect(withTemplateDefaults(t, undefined)).toBe(t);
});

const wf = (defaults: string) => `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: defaults-}
spec:
  entrypoint: main
${defaults}
  templates:
  - name: main
    steps:
    - - {name: a, template: say}
      - {name: b, templateRef: {name: lib, template: echo}}
      - name: c
        inline:
          script: {source: "print(1)"}
  - name: say
    container: {args: [hi]}
`;
const LIB = `apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: lib}
spec:
  templates:
  - name: echo
    container: {image: busybox, args: [lib]}
`;

test('lint takes an image from templateDefaults (Argo v3.7.9 e2e: functional/template-default-image.yaml) and asks for one without', () => {
  const library = new Library();
  for (const d of lintText(LIB, 'lib.yaml').documents) library.add(d);
  const withDefaults = wf('  templateDefaults:\n    container: {image: alpine, command: [echo]}\n    script: {image: python:3, command: [python]}\n    timeout: 1m');
  expect(lintText(withDefaults, 'wf.yaml', { library }).issues).toEqual([]);
  expect(lintText(wf(''), 'wf.yaml', { library }).issues.map(({ line, path, message }) => ({ line, path, message }))).toEqual([
    { line: 14, path: 'templates.main.steps[0][2].inline.script', message: 'image may not be empty: give one here or in spec.templateDefaults.script' },
    { line: 16, path: 'templates.say.container', message: 'image may not be empty: give one here or in spec.templateDefaults.container' },
  ]);
});

test('a run applies its templateDefaults to every template it runs: its own, inline ones and ones called by templateRef', () => {
  const library = new Library();
  for (const d of lintText(LIB, 'lib.yaml').documents) library.add(d);
  const text = wf('  templateDefaults:\n    container: {image: alpine, command: [echo]}\n    script: {image: python:3, command: [python]}\n    retryStrategy: {limit: "2"}');
  const doc = lintText(text, 'wf.yaml', { library }).documents[0].value;
  const spec = resolveWorkflow(doc, library);
  const byName = new Map((spec.templates as Json[]).map((t) => [String(t.name), t]));
  expect(byName.get('say')).toEqual({ name: 'say', retryStrategy: { limit: '2' }, container: { image: 'alpine', command: ['echo'], args: ['hi'] } });
  expect(byName.get('lib/echo')).toEqual({ name: 'lib/echo', retryStrategy: { limit: '2' }, container: { image: 'busybox', command: ['echo'], args: ['lib'] } });
  const inline = ((byName.get('main')!.steps as Json[][])[0][2].inline) as Json;
  expect(inline).toEqual({ retryStrategy: { limit: '2' }, script: { image: 'python:3', command: ['python'], source: 'print(1)' } });
});
