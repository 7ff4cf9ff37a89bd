// argo lint applies Argo's name rules (workflow/validate/validate.go validateWorkflowFieldNames, and
// validateSteps for steps) and reads a key with no value as Go's decoder does (absent). The cases are
// the ones Argo v3.7.9's own e2e suite lints (test/e2e/cli_test.go: malformed-workflowtemplate-2.yaml,
// expectedfailures/empty-parameter-{dag,steps}.yaml) and their kin; each failed before names.ts.
import { lintText } from '../../../argo/lint/validate.js';

const issues = (text: string) => lintText(text, 'names.yaml').issues.map(({ line, path, message }) => ({ line, path, message }));
const FIELD = "name must consist of alpha-numeric characters or '-', and must start with an alpha-numeric character (e.g. My-name1-2, 123-NAME)";
const PARAM = "Parameter/Artifact name must consist of alpha-numeric characters, '_' or '-' e.g. my_param_1, MY-PARAM-1";

test('a template without a name is refused at the template (Argo: spec.templates[0].name is required)', () => {
  const text = `apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: malformed}
spec:
  templates:
    - container:
        image: argoproj/argosay:v2
`;
  expect(issues(text)).toEqual([{ line: 6, path: 'templates[0]', message: 'name is required' }]);
});

test('template, task and step names follow Argo’s workflow-field rule; parameters and artifacts theirs', () => {
  const text = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: names-}
spec:
  entrypoint: main
  arguments:
    parameters: [{name: "bad param", value: x}]
  templates:
  - name: main
    dag:
      tasks:
      - {name: a.b, template: my_leaf, arguments: {artifacts: [{name: "x/y", raw: {data: "1"}}]}}
  - name: my_leaf
    inputs:
      parameters: [{name: ok_name-1, value: "1"}]
      artifacts: [{name: "x/y", path: /tmp/x, optional: true}]
    outputs:
      parameters: [{name: "o o", value: "2"}]
    container: {image: alpine}
`;
  expect(issues(text)).toEqual([
    { line: 7, path: 'spec.arguments.parameters.bad param.name', message: `name "bad param" is invalid: ${PARAM}` },
    { line: 12, path: 'templates.main.dag.tasks.a.b.name', message: `name "a.b" is invalid: ${FIELD}` },
    { line: 12, path: 'templates.main.dag.tasks.a.b.arguments.artifacts.x/y.name', message: `name "x/y" is invalid: ${PARAM}` },
    { line: 13, path: 'templates.my_leaf.name', message: `name "my_leaf" is invalid: ${FIELD}` },
    { line: 16, path: 'templates.my_leaf.inputs.artifacts.x/y.name', message: `name "x/y" is invalid: ${PARAM}` },
    { line: 18, path: 'templates.my_leaf.outputs.parameters.o o.name', message: `name "o o" is invalid: ${PARAM}` },
  ]);
});

test('a step needs a name unique in its whole template, not only in its group', () => {
  const text = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: steps-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: leaf}
    - - {name: a, template: leaf}
      - {template: leaf}
  - name: leaf
    container: {image: alpine}
`;
  expect(issues(text)).toEqual([
    { line: 10, path: 'templates.main.steps[1][0].name', message: 'name "a" is not unique' },
    { line: 11, path: 'templates.main.steps[1][1]', message: 'name is required' },
  ]);
});

test('a name of 129 characters is too long for a template', () => {
  const long = 'a'.repeat(129);
  const text = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: long-}
spec:
  entrypoint: ${long}
  templates:
  - {name: ${long}, container: {image: alpine}}
`;
  expect(issues(text)).toEqual([{ line: 7, path: `templates.${long}.name`, message: `name "${long}" is invalid: must be no more than 128 characters` }]);
});

test('a key with no value reads as absent, as Go’s decoder reads null (Argo: inputs.parameters.message was not supplied)', () => {
  const text = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: empty-
  labels:
spec:
  entrypoint: abc
  workflowMetadata:
    labels:
  templates:
  - name: abc
    dag:
      tasks:
      - name: a
        template: whalesay
        arguments:
          parameters:
  - name: whalesay
    inputs:
      parameters:
      - name: message
    container:
      image: alpine
      args:
`;
  expect(issues(text)).toEqual([{ line: 14, path: 'templates.abc.dag.tasks.a', message: 'inputs.parameters.message was not supplied' }]);
  const doc = lintText(text, 'names.yaml').documents[0].value as { spec: { templates: { container?: Record<string, unknown> }[] } };
  expect(doc.spec.templates[1].container).toEqual({ image: 'alpine' });
});
