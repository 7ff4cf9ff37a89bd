// InputError: the one base of every "your input is wrong" error, its formatting (what the CLI prints),
// and each subclass — spec, sites and quotas files, Kubernetes options, Argo — being one, with issues.
import { jest } from '@jest/globals';
import { InputError, formatIssue, formatIssues } from '../../../contract/input-error.js';
import { SpecError, parsePipelineSpec, validatePipelineSpec } from '../../../contract/parse.js';
import { parseSitesFile } from '../../../contract/sites.js';
import { parseQuotasFile } from '../../../contract/quotas.js';
import { KubernetesOptionsError, parseKubernetesOptions } from '../../../contract/kubernetes.js';
import { ArgoValidationError } from '../../../argo/lint/load.js';
import { lintText } from '../../../argo/lint/validate.js';
import { ResolveError, resolveWorkflow } from '../../../argo/resolve.js';
import { printError } from '../../../cli/errors.js';

const thrown = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
};

describe('formatting', () => {
  test('an issue without a source is a bullet: path (or "(root)"), line and column when known', () => {
    expect(formatIssue({ path: 'stages.train.steps', line: 4, message: 'Too small' })).toBe('  - stages.train.steps (line 4): Too small');
    expect(formatIssue({ path: '', message: 'must be a mapping' })).toBe('  - (root): must be a mapping');
    expect(formatIssue({ path: 'a', line: 2, column: 7, message: 'bad' })).toBe('  - a (line 2, column 7): bad');
  });

  test('an issue with a source reads like a compiler\'s: file:line: path: message', () => {
    expect(formatIssue({ source: 'wf.yaml', path: 'templates.main', line: 9, message: 'not found' })).toBe('wf.yaml:9: templates.main: not found');
    expect(formatIssue({ source: 'wf.yaml', path: '', message: 'empty' })).toBe('wf.yaml: empty');
    expect(formatIssue({ source: 'wf.yaml', path: 'p', line: 3, column: 5, message: 'm' })).toBe('wf.yaml:3:5: p: m');
  });

  test('issues of one input go under a header naming the input; self-sourced issues need none', () => {
    const bullets = [
      { path: 'name', line: 1, message: 'must be lower-case' },
      { path: 'stages.train.steps', line: 4, message: 'Too small' },
    ];
    expect(formatIssues(bullets, { what: 'pipeline spec', source: 'x.yaml' })).toBe('x.yaml: invalid pipeline spec\n  - name (line 1): must be lower-case\n  - stages.train.steps (line 4): Too small');
    expect(formatIssues([{ path: 'kubernetes.image', message: 'bad' }], { what: 'Kubernetes options' })).toBe('invalid Kubernetes options\n  - kubernetes.image: bad');
    expect(formatIssues([{ path: 'x', message: 'y' }])).toBe('invalid input\n  - x: y');
    const sourced = [
      { source: 'a.yaml', path: 'spec.entrypoint', line: 5, message: 'entrypoint template "x" not found' },
      { source: 'b.yaml', path: '', message: 'no Argo manifest' },
    ];
    expect(formatIssues(sourced, { what: 'Argo' })).toBe('a.yaml:5: spec.entrypoint: entrypoint template "x" not found\nb.yaml: no Argo manifest');
  });

  test('an InputError carries what, source and issues; its message is formatIssues of them', () => {
    const issues = [{ path: 'quotas.Zurich', line: 2, message: 'bad site name' }];
    const e = new InputError('quotas file', issues, { source: 'q.yaml' });
    expect(e).toBeInstanceOf(Error);
    expect(e).toMatchObject({ name: 'InputError', what: 'quotas file', source: 'q.yaml', issues });
    expect(e.message).toBe(formatIssues(issues, { what: 'quotas file', source: 'q.yaml' }));
    expect(new InputError('Argo', [{ path: '', message: 'one sentence' }], { message: 'one sentence' }).message).toBe('one sentence');
  });
});

describe('every input error is an InputError with issues', () => {
  test('pipeline spec (text and object): SpecError', () => {
    const e = thrown(() => parsePipelineSpec('name: Not_A_Label\nstages:\n  train:\n    steps: -1\n', 'x.yaml'));
    expect(e).toBeInstanceOf(SpecError);
    expect(e).toBeInstanceOf(InputError);
    const s = e as SpecError;
    expect(s).toMatchObject({ name: 'SpecError', what: 'pipeline spec', source: 'x.yaml' });
    expect(s.issues.map((i) => [i.path, i.line])).toEqual(expect.arrayContaining([
      ['name', 1],
      ['stages.train.steps', 4],
    ]));
    expect(s.message).toMatch(/^x\.yaml: invalid pipeline spec\n {2}- name \(line 1\): must be lower-case/);
    expect(s.message).toMatch(/\n {2}- stages\.train\.steps \(line 4\): Too small/);
    const o = thrown(() => validatePipelineSpec({ name: 'ok', bogus: 1 }, 'sdk'));
    expect(o).toBeInstanceOf(InputError);
    expect((o as SpecError).issues).toEqual([{ path: 'bogus', message: 'unknown field "bogus"', line: undefined }]);
    expect((o as Error).message).toBe('sdk: invalid pipeline spec\n  - bogus: unknown field "bogus"');
  });

  test('YAML that is not a mapping, or does not parse, is a root issue', () => {
    const e = thrown(() => parsePipelineSpec('- a\n', 'l.yaml')) as SpecError;
    expect(e).toBeInstanceOf(InputError);
    expect(e.message).toBe('l.yaml: invalid pipeline spec\n  - (root): a pipeline spec must be a mapping with at least "name"');
    const y = thrown(() => parsePipelineSpec('name: [\n', 'y.yaml')) as SpecError;
    expect(y).toBeInstanceOf(InputError);
    expect(y.issues[0]).toMatchObject({ path: '' });
  });

  test('sites file and quotas file: SpecError with their own `what`', () => {
    const sites = thrown(() => parseSitesFile('sites:\n  - name: zurich\n    bogus: 1\n', 'sites.yaml'));
    expect(sites).toBeInstanceOf(InputError);
    expect(sites).toMatchObject({ what: 'sites file', source: 'sites.yaml' });
    expect((sites as SpecError).issues.length).toBeGreaterThan(0);
    expect((sites as Error).message).toMatch(/^sites\.yaml: invalid sites file\n/);
    const quotas = thrown(() => parseQuotasFile('quotas:\n  Zurich:\n    a: {gpus: 1}\n', 'q.yaml'));
    expect(quotas).toBeInstanceOf(InputError);
    expect(quotas).toMatchObject({ what: 'quotas file', source: 'q.yaml' });
    expect((quotas as SpecError).issues.some((i) => i.path.startsWith('quotas.Zurich'))).toBe(true);
  });

  test('Kubernetes options: KubernetesOptionsError', () => {
    const e = thrown(() => parseKubernetesOptions({ hostNetwork: true }, 'stages.deploy.kubernetes'));
    expect(e).toBeInstanceOf(KubernetesOptionsError);
    expect(e).toBeInstanceOf(InputError);
    const k = e as KubernetesOptionsError;
    expect(k).toMatchObject({ name: 'KubernetesOptionsError', what: 'Kubernetes options' });
    expect(k.issues.map((i) => i.path)).toEqual(['stages.deploy.kubernetes.hostNetwork']);
    expect(k.message).toMatch(/^invalid Kubernetes options\n {2}- stages\.deploy\.kubernetes\.hostNetwork: /);
  });

  test('Argo manifests: ArgoValidationError, each issue naming its file and line', () => {
    const r = lintText('apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: x-}\nspec:\n  entrypoint: nope\n  templates: []\n', 'bad.yaml');
    expect(r.issues.length).toBeGreaterThan(0);
    const e = new ArgoValidationError(r.issues);
    expect(e).toBeInstanceOf(InputError);
    expect(e).toMatchObject({ name: 'ArgoValidationError', what: 'Argo' });
    expect(e.issues.every((i) => i.source === 'bad.yaml')).toBe(true);
    expect(e.message).toBe(r.issues.map(formatIssue).join('\n'));
    expect(e.message).toMatch(/^bad\.yaml:\d+: spec\.entrypoint: entrypoint template "nope" not found/m);
  });

  test('an unresolvable Argo reference: ResolveError, its message the sentence itself', () => {
    const doc = { apiVersion: 'argoproj.io/v1alpha1', kind: 'Workflow', metadata: { generateName: 'x-' }, spec: { workflowTemplateRef: { name: 'missing' } } };
    const e = thrown(() => resolveWorkflow(doc, { get: () => undefined }));
    expect(e).toBeInstanceOf(ResolveError);
    expect(e).toBeInstanceOf(InputError);
    expect(e).toMatchObject({ name: 'ResolveError', what: 'Argo', message: 'WorkflowTemplate "missing" not found', issues: [{ path: '', message: 'WorkflowTemplate "missing" not found' }] });
  });
});

describe('the CLI prints errors in one place', () => {
  const printed = (err: unknown): string => {
    const spy = jest.spyOn(console, 'error').mockImplementation(() => {});
    try {
      printError(err);
      return spy.mock.calls.map((c) => c.join(' ')).join('\n');
    } finally {
      spy.mockRestore();
    }
  };

  test('an InputError as its message (no prefix, no stack); anything else prefixed with tandem:', () => {
    const spec = thrown(() => parsePipelineSpec('name: Not_A_Label\n', 'x.yaml')) as Error;
    expect(printed(spec)).toBe(spec.message);
    expect(printed(spec)).not.toMatch(/\bat .*\.ts:\d+/);
    const k = thrown(() => parseKubernetesOptions({ hostPID: true })) as Error;
    expect(printed(k)).toBe(k.message);
    expect(printed(new Error('cannot reach the Temporal server'))).toBe('tandem: cannot reach the Temporal server');
  });
});
