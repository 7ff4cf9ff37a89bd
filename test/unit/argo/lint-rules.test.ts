// argo lint applies Argo v3.7.9's validation rules for a template's own fields and a workflow's
// settings (argo/lint/template-rules.ts, after workflow/validate/validate.go). Each refused case below
// passed lint before (and Argo refuses it at submission); the accepted ones are the same fields used
// as Argo allows, so the rules cannot refuse everything.
import { lintText } from '../../../argo/lint/validate.js';

const issues = (text: string) => lintText(text, 'rules.yaml').issues.map(({ path, message }) => `${path}: ${message}`);
const wf = (body: string) => `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: v-}
spec:
  entrypoint: main
${body}`;
const leaf = '  - name: leaf\n    container: {image: alpine}\n';

test.each([
  ['an output parameter with neither value nor valueFrom', "  templates:\n  - name: main\n    container: {image: alpine}\n    outputs:\n      parameters:\n      - name: p\n", 'templates.main.outputs.parameters.p: does not have valueFrom or value specified'],
  ['an output parameter with both', "  templates:\n  - name: main\n    container: {image: alpine}\n    outputs:\n      parameters:\n      - {name: p, value: x, valueFrom: {path: /tmp/p}}\n", 'templates.main.outputs.parameters.p: has both valueFrom and value specified. Choose one.'],
  ['a valueFrom with only a default', "  templates:\n  - name: main\n    container: {image: alpine}\n    outputs:\n      parameters:\n      - {name: p, valueFrom: {default: x}}\n", 'templates.main.outputs.parameters.p.valueFrom: valueFrom type unspecified. choose one of: path, jqFilter, jsonPath, parameter, raw, expression'],
  ['a container output read from a parameter', "  templates:\n  - name: main\n    container: {image: alpine}\n    outputs:\n      parameters:\n      - {name: p, valueFrom: {parameter: x}}\n", 'templates.main.outputs.parameters.p.valueFrom: path must be specified for container templates'],
  ['a steps output read from a path', "  templates:\n  - name: main\n    steps:\n    - - {name: a, template: leaf}\n    outputs:\n      parameters:\n      - {name: p, valueFrom: {path: /tmp/p}}\n" + leaf, 'templates.main.outputs.parameters.p.valueFrom: parameter or expression must be specified for steps templates'],
  ['an empty enum', "  arguments:\n    parameters:\n    - {name: p, value: a, enum: []}\n  templates:\n  - name: main\n    container: {image: alpine}\n", 'spec.arguments.parameters.p.enum: enum should contain at least one value'],
  ['activeDeadlineSeconds on a steps template', "  templates:\n  - name: main\n    activeDeadlineSeconds: 10\n    steps:\n    - - {name: a, template: leaf}\n" + leaf, 'templates.main.activeDeadlineSeconds: activeDeadlineSeconds is only valid for leaf templates'],
  ['a negative activeDeadlineSeconds', "  templates:\n  - name: main\n    activeDeadlineSeconds: -5\n    container: {image: alpine}\n", 'templates.main.activeDeadlineSeconds: activeDeadlineSeconds must be a positive integer > 0 or an argo variable'],
  ['parallelism on a container', "  templates:\n  - name: main\n    parallelism: 2\n    container: {image: alpine}\n", 'templates.main.parallelism: parallelism is only valid for steps and dag templates'],
  ['a DAG without tasks', "  templates:\n  - name: main\n    dag:\n      tasks: []\n", 'templates.main.dag.tasks: must have at least one task'],
  ['a task name starting with a digit under depends', "  templates:\n  - name: main\n    dag:\n      tasks:\n      - {name: 1a, template: leaf}\n      - {name: b, template: leaf, depends: 1a}\n" + leaf, "templates.main.dag.tasks.1a.name: name cannot begin with a digit when using either 'depends' or 'dependencies'"],
  ['continueOn beside depends', "  templates:\n  - name: main\n    dag:\n      tasks:\n      - {name: a, template: leaf, continueOn: {failed: true}}\n      - {name: b, template: leaf, depends: a}\n" + leaf, "templates.main.dag.tasks.a.continueOn: cannot use 'continueOn' when using 'depends'. Instead use 'dep-task.Failed'/'dep-task.Errored'"],
  ['depends and dependencies in one DAG', "  templates:\n  - name: main\n    dag:\n      tasks:\n      - {name: a, template: leaf}\n      - {name: b, template: leaf, depends: a}\n      - {name: c, template: leaf, dependencies: [a]}\n" + leaf, "templates.main.dag: cannot use both 'depends' and 'dependencies' in the same DAG template"],
  ['two input artifacts at one path', "  templates:\n  - name: main\n    inputs:\n      artifacts:\n      - {name: a, path: /tmp/a, raw: {data: x}}\n      - {name: b, path: /tmp/a, raw: {data: y}}\n    container: {image: alpine}\n", "templates.main.inputs.artifacts.b.path: path '/tmp/a' already mounted in inputs.artifacts.a"],
  ['an unknown resource action', "  templates:\n  - name: main\n    resource:\n      action: frobnicate\n      manifest: 'kind: ConfigMap'\n", 'templates.main.resource.action: action must be one of: get, create, apply, delete, replace, patch'],
  ['a resource manifest that is not YAML', "  templates:\n  - name: main\n    resource:\n      action: create\n      manifest: '{a: [}'\n", 'templates.main.resource.manifest: manifest must be a valid yaml'],
  ['an input artifact with from', "  templates:\n  - name: main\n    inputs:\n      artifacts:\n      - {name: a, path: /tmp/a, from: x}\n    container: {image: alpine}\n", 'templates.main.inputs.artifacts.a.from: from not valid in inputs'],
  ['a metric name with a dash', "  templates:\n  - name: main\n    container: {image: alpine}\n    metrics:\n      prometheus:\n      - {name: bad-name, help: h, counter: {value: '1'}}\n", "templates.main.metrics.prometheus[0].name: metric name 'bad-name' is invalid. Metric names must contain alphanumeric characters or '_'"],
  ['a globalName with a space', "  templates:\n  - name: main\n    container: {image: alpine}\n    outputs:\n      parameters:\n      - {name: p, globalName: 'bad name', valueFrom: {path: /tmp/p}}\n", "templates.main.outputs.parameters.p.globalName: Parameter/Artifact name must consist of alpha-numeric characters, '_' or '-' e.g. my_param_1, MY-PARAM-1"],
  ['an unknown podGC strategy', "  podGC: {strategy: OnSundays}\n  templates:\n  - name: main\n    container: {image: alpine}\n", "spec.podGC.strategy: unknown strategy 'OnSundays' (one of OnPodCompletion, OnPodSuccess, OnWorkflowCompletion, OnWorkflowSuccess)"],
  ['a step argument read from a path', "  templates:\n  - name: main\n    steps:\n    - - name: a\n        template: leaf\n        arguments:\n          parameters: [{name: p, valueFrom: {path: /tmp/x}}]\n" + leaf, 'templates.main.steps[0][0].arguments.parameters.p.valueFrom: valueFrom only allows: default, configMapKeyRef and supplied'],
  ['a step argument without a value', "  templates:\n  - name: main\n    steps:\n    - - name: a\n        template: leaf\n        arguments:\n          parameters: [{name: p}]\n  - name: leaf\n    inputs:\n      parameters: [{name: p, value: d}]\n    container: {image: alpine}\n", 'templates.main.steps[0][0].arguments.parameters.p: value or valueFrom is required'],
  ['a task argument artifact from nowhere', "  templates:\n  - name: main\n    dag:\n      tasks:\n      - name: a\n        template: leaf\n        arguments:\n          artifacts: [{name: art}]\n  - name: leaf\n    inputs:\n      artifacts: [{name: art, path: /tmp/a}]\n    container: {image: alpine}\n", 'templates.main.dag.tasks.a.arguments.artifacts.art: from, artifact location, or key is required'],
  ['a containerSet with outputs and no main container, and a dependency on no container', "  templates:\n  - name: main\n    containerSet:\n      containers:\n      - {name: a, image: alpine, command: [echo]}\n      - {name: b, image: alpine, command: [echo], dependencies: [zz]}\n    outputs:\n      parameters: [{name: p, valueFrom: {path: /tmp/p}}]\n", ['templates.main.containerSet.containers: containers must have a container named "main" for input or output', "templates.main.containerSet.containers[1].dependencies: dependency 'zz' not defined"]],
  ['a containerSet whose containers depend on each other in a cycle', "  templates:\n  - name: main\n    containerSet:\n      containers:\n      - {name: a, image: alpine, command: [echo], dependencies: [b]}\n      - {name: b, image: alpine, command: [echo], dependencies: [a]}\n", ['templates.main.containerSet.containers[0].dependencies: containers have a dependency cycle']],
])('%s is refused, as Argo refuses it', (_what, body, message) => {
  expect(issues(wf(body))).toEqual(Array.isArray(message) ? message : [message]);
});

test.each([
  ['outputs read as each template type reads them', "  arguments:\n    parameters: [{name: t, value: '10'}, {name: g, value: gg}]\n  templates:\n  - name: main\n    steps:\n    - - {name: a, template: leaf}\n    - - {name: r, template: res}\n    outputs:\n      parameters:\n      - {name: s, valueFrom: {parameter: '{{steps.a.outputs.parameters.p}}'}}\n      - {name: e, valueFrom: {expression: 'steps.a.outputs.parameters.p'}}\n      - {name: v, value: '1', globalName: my_global-1}\n  - name: leaf\n    container: {image: alpine}\n    activeDeadlineSeconds: '{{workflow.parameters.t}}'\n    outputs:\n      parameters:\n      - {name: p, valueFrom: {path: /tmp/p, default: x}}\n      artifacts:\n      - {name: o, path: /tmp/o, globalName: '{{workflow.parameters.g}}'}\n  - name: res\n    resource:\n      action: get\n    outputs:\n      parameters:\n      - {name: j, valueFrom: {jsonPath: '{.metadata.name}'}}\n"],
  ['a templated resource action and manifest', "  arguments:\n    parameters: [{name: action, value: create}, {name: x, value: '1'}]\n  templates:\n  - name: main\n    resource:\n      action: '{{workflow.parameters.action}}'\n      manifest: |\n        apiVersion: v1\n        kind: ConfigMap\n        metadata: {name: '{{workflow.name}}'}\n        data: {a: {{workflow.parameters.x}}}\n"],
  ['a DAG with dependencies and continueOn, and a workflow argument from a ConfigMap', "  arguments:\n    parameters:\n    - {name: c, valueFrom: {configMapKeyRef: {name: cm, key: k}}}\n  podGC: {strategy: OnPodSuccess}\n  templates:\n  - name: main\n    parallelism: 2\n    dag:\n      tasks:\n      - {name: a, template: leaf, continueOn: {failed: true}}\n      - {name: b, template: leaf, dependencies: [a]}\n" + leaf],
])('%s: accepted', (_what, body) => {
  expect(issues(wf(body))).toEqual([]);
});

test('a CronWorkflow: concurrencyPolicy one of Allow, Forbid, Replace; startingDeadlineSeconds not negative', () => {
  const cron = (extra: string) => `apiVersion: argoproj.io/v1alpha1\nkind: CronWorkflow\nmetadata: {name: c}\nspec:\n  schedules: ['* * * * *']\n${extra}  workflowSpec:\n    entrypoint: main\n    templates:\n    - {name: main, container: {image: alpine}}\n`;
  expect(issues(cron('  concurrencyPolicy: Sometimes\n  startingDeadlineSeconds: -3\n'))).toEqual([
    "spec.concurrencyPolicy: 'Sometimes' is not a valid concurrencyPolicy (one of Allow, Forbid, Replace)",
    'spec.startingDeadlineSeconds: startingDeadlineSeconds must be positive',
  ]);
  expect(issues(cron('  concurrencyPolicy: Forbid\n  startingDeadlineSeconds: 0\n'))).toEqual([]);
});

test('other argoproj.io kinds (Argo CD, Events, Rollouts, an executor plugin) are passed over as argo lint passes them; a misspelt kind is still an error', () => {
  const other = 'apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: app}\nspec: {project: default}\n---\napiVersion: argoproj.io/v1alpha1\nkind: Sensor\nmetadata: {name: s}\n';
  const r = lintText(other, 'gitops.yaml');
  expect(r.skipped.map((s) => s.kind)).toEqual(['Application', 'Sensor']);
  expect(r.documents).toEqual([]);
  expect(issues('apiVersion: argoproj.io/v1alpha1\nkind: Workflw\nmetadata: {name: w}\n')).toEqual(['kind: kind must be one of Workflow, WorkflowTemplate, ClusterWorkflowTemplate, CronWorkflow, WorkflowEventBinding (got "Workflw")']);
});

test('a Workflow that runs a WorkflowTemplate may not bring templates of its own', () => {
  const text = 'apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: v-}\nspec:\n  workflowTemplateRef: {name: lib}\n  templates:\n  - {name: x, container: {image: alpine}}\n';
  expect(issues(text)).toContain('templates: Templates is invalid field in spec if workflow referred WorkflowTemplate reference');
});
