// The lint pass parses what the interpreter would parse only at run time — `when` (govaluate),
// `depends`, expr-lang expressions in retryStrategy and lifecycle hooks — and reports a broken one
// with its template path and line; a YAML alias bomb is an ordinary lint issue with file and line.
import { lintText } from '../../../argo/lint/validate.js';

const wf = (body: string) => `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: expr-}
spec:
  entrypoint: main
  templates:
${body}
  - name: echo
    container: {image: alpine, command: [echo, hi]}
`;

const issues = (text: string) => lintText(text, 'expr.yaml').issues.map(({ line, path, message }) => ({ line, path, message }));

describe('argo lint: expressions are parsed, not only tokenized', () => {
  test.each([
    ['a dangling operator', '"{{steps.a.outputs.result}} =="'],
    ['an unclosed parenthesis', '"({{steps.a.outputs.result}} == heads"'],
    ['two operands without an operator', '"{{steps.a.outputs.result}} heads"'],
    ['an operator without a left operand', '"== heads"'],
  ])('a steps `when` with %s is rejected at its path and line', (_what, when) => {
    const r = issues(
      wf(`  - name: main
    steps:
    - - {name: a, template: echo}
    - - {name: b, template: echo, when: ${when}}`),
    );
    expect(r).toEqual([{ line: 10, path: 'templates.main.steps[1][0].when', message: expect.stringMatching(/^invalid when: /) }]);
  });

  test('a dag task `when` that cannot parse is rejected at its path', () => {
    const r = issues(
      wf(`  - name: main
    dag:
      tasks:
      - {name: a, template: echo}
      - {name: b, template: echo, depends: a, when: "{{tasks.a.outputs.result}} == (heads"}`),
    );
    expect(r).toEqual([{ line: 11, path: 'templates.main.dag.tasks.b.when', message: expect.stringMatching(/^invalid when: unbalanced parentheses/) }]);
  });

  test('valid conditions of every form Argo accepts still pass', () => {
    const r = issues(
      wf(`  - name: main
    steps:
    - - {name: a, template: echo}
    - - {name: b, template: echo, when: "{{steps.a.outputs.result}} == heads"}
      - {name: c, template: echo, when: "({{steps.a.outputs.result}} != tails) && !({{steps.a.exitCode}} > 1)"}
      - {name: d, template: echo, when: "'{{steps.a.outputs.result}}' =~ '^h'"}
      - {name: e, template: echo, when: "{{=steps.a.outputs.result == 'heads'}}"}
      - {name: f, template: echo, when: "{{steps.a.outputs.result}} in (heads, tails)"}`),
    );
    expect(r).toEqual([]);
  });

  test('a broken retryStrategy expression and a broken hook expression are rejected at their paths', () => {
    const r = issues(
      wf(`  - name: main
    retryStrategy: {limit: 2, expression: "lastRetry.status == "}
    steps:
    - - name: a
        template: echo
        hooks: {running: {template: echo, expression: "steps.a.status == 'Running' &&"}}`),
    );
    expect(r).toEqual([
      { line: 8, path: 'templates.main.retryStrategy.expression', message: expect.stringMatching(/^invalid expression "lastRetry.status == ": /) },
      { line: 12, path: 'templates.main.steps[0][0].hooks.running.expression', message: expect.stringMatching(/^invalid expression /) },
    ]);
  });
});

describe('argo lint: a YAML alias bomb', () => {
  test('is an issue naming the file and the line of the alias that multiplies, not a thrown error', () => {
    const text = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: bomb-}
spec:
  entrypoint: main
  a: &a ["x","x","x","x","x","x","x","x","x"]
  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
  e: [*d,*d,*d,*d,*d,*d,*d,*d,*d]
  templates:
  - name: main
    container: {image: alpine, command: [echo, hi]}
`;
    const r = lintText(text, 'bomb.yaml');
    expect(r.issues).toEqual([{ source: 'bomb.yaml', path: '', line: 8, message: expect.stringMatching(/YAML aliases expand beyond 1000 nodes/) }]);
  });
});
