// argo lint checks a loop's own fields as Argo's validation and controller read them, before anything
// starts: one of withItems / withParam / withSequence, one of count / end, withSequence values that are
// whole numbers (strconv.Atoi) when literal, and at most MAX_LOOP_ITEMS items. A value with a tag is
// known only when the step runs; the interpreter checks it there (test/unit/argo/loops.test.ts).
import { lintText } from '../../../argo/lint/validate.js';
import { MAX_LOOP_ITEMS } from '../../../argo/lang/sequence.js';

const wf = (tasks: string) => `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: loops-}
spec:
  entrypoint: main
  arguments: {parameters: [{name: n, value: "3"}]}
  templates:
  - name: main
    dag:
      tasks:
${tasks}
  - name: echo
    container: {image: alpine, command: [echo, hi]}
`;
const issues = (text: string) => lintText(text, 'loops.yaml').issues.map(({ line, path, message }) => ({ line, path, message }));
const task = (loop: string) => `      - {name: t, template: echo, ${loop}}`;

test.each([
  ['count that is not a number', 'withSequence: {count: "x5"}', 'templates.main.dag.tasks.t.withSequence.count', '"x5" is not a whole number'],
  ['fractional start', 'withSequence: {start: "1.5", end: 4}', 'templates.main.dag.tasks.t.withSequence.start', '"1.5" is not a whole number'],
  ['exponent count', 'withSequence: {count: "1e3"}', 'templates.main.dag.tasks.t.withSequence.count', '"1e3" is not a whole number'],
  ['neither end nor count', 'withSequence: {start: "3"}', 'templates.main.dag.tasks.t.withSequence', 'neither end nor count was specified'],
  ['both end and count', 'withSequence: {count: "2", end: "3"}', 'templates.main.dag.tasks.t.withSequence', 'only one of count or end can be defined in withSequence'],
  ['two kinds of loop', 'withSequence: {count: "2"}, withItems: [a, b]', 'templates.main.dag.tasks.t.withSequence', 'only one of withItems, withParam, withSequence can be specified (got withItems, withSequence)'],
  ['a count over the bound', 'withSequence: {count: "100000000"}', 'templates.main.dag.tasks.t.withSequence', `100000000 items (start 0, end 99999999), over the limit of ${MAX_LOOP_ITEMS} a loop may have`],
])('%s is an issue at its path and line', (_what, loop, path, message) => {
  expect(issues(wf(task(loop)))).toEqual([{ line: 11, path, message }]);
});

test('valid loops, and values known only at run time, pass', () => {
  for (const loop of ['withSequence: {count: "5"}', 'withSequence: {start: "+2", end: -3, format: "n%02d"}', 'withSequence: {count: "0"}', 'withSequence: {count: -2}', 'withSequence: {count: "{{workflow.parameters.n}}"}', 'withItems: [a, b]', 'withParam: "[1, 2]"']) {
    expect({ loop, issues: issues(wf(task(loop))) }).toEqual({ loop, issues: [] });
  }
});

test('a steps loop is checked the same way', () => {
  const text = wf(task('withItems: [a]')).replace(/ {4}dag:\n {6}tasks:\n.*\n/, '    steps:\n    - - {name: s, template: echo, withSequence: {count: "two"}}\n');
  expect(issues(text)).toEqual([{ line: 10, path: 'templates.main.steps[0][0].withSequence.count', message: '"two" is not a whole number' }]);
});
