// What a pipeline spec may hand a job (contract/pipeline.ts, contract/parse.ts): no variables that
// change the programs Tandem runs around the job, no NUL or stray control characters, a bounded
// number of env entries, and key checks that stay linear in the size of the file.
import { parsePipelineSpec, validatePipelineSpec } from '../../../contract/parse.js';
import { MAX_ENV_ENTRIES } from '../../../contract/pipeline.js';

import { issuesOf } from '../../spec-issues.js';
const withTrain = (train: object) => ({ name: 'x', stages: { train } });

describe('env names a spec may not set', () => {
  test.each(['LD_PRELOAD', 'LD_LIBRARY_PATH', 'LD_AUDIT', 'DYLD_INSERT_LIBRARIES', 'NODE_OPTIONS', 'BASH_ENV', 'ENV'])('%s is refused, naming the field', (name) => {
    const issues = issuesOf(() => validatePipelineSpec(withTrain({ env: { [name]: '/tmp/x.so' } })));
    expect(issues).toEqual([{ path: `stages.train.env.${name}`, message: expect.stringMatching(/may not be set by a pipeline spec/), line: undefined }]);
  });

  test('in YAML with its line, in every stage that has env', () => {
    const text = 'name: x\nstages:\n  train:\n    env:\n      OK: "1"\n      LD_PRELOAD: /tmp/evil.so\n  deploy:\n    env:\n      NODE_OPTIONS: --require /tmp/x.js\n';
    expect(issuesOf(() => parsePipelineSpec(text, 'p.yaml'))).toEqual([
      expect.objectContaining({ path: 'stages.train.env.LD_PRELOAD', line: 6 }),
      expect.objectContaining({ path: 'stages.deploy.env.NODE_OPTIONS', line: 9 }),
    ]);
    expect(() => parsePipelineSpec(text, 'p.yaml')).toThrow(/stages\.train\.env\.LD_PRELOAD \(line 6\): may not be set/);
  });

  test('ordinary names, PATH and PYTHONPATH included, are fine; a bad name says why (not "Invalid key in record")', () => {
    expect(validatePipelineSpec(withTrain({ env: { PATH: '/opt/bin:/usr/bin', PYTHONPATH: '/opt/lib', OLD_LD: 'x', TANDEM_FAIL_AT_STEP: '3' } })).stages.train.env).toEqual({ PATH: '/opt/bin:/usr/bin', PYTHONPATH: '/opt/lib', OLD_LD: 'x', TANDEM_FAIL_AT_STEP: '3' });
    expect(issuesOf(() => validatePipelineSpec(withTrain({ env: { 'bad-name': 'x' } })))).toEqual([expect.objectContaining({ path: 'stages.train.env.bad-name', message: 'must be an environment variable name' })]);
  });
});

describe('NUL and control characters', () => {
  test('a NUL byte in an env value, a command argument or the program is refused, naming the field', () => {
    const issues = issuesOf(() => validatePipelineSpec({ name: 'x', stages: { train: { command: ['/bin/sh', '-c', 'echo a\0b'], env: { A: 'x\0y' } }, deploy: { command: ['/bin/serve\0'] } } }));
    expect(issues.map((i) => i.path).sort()).toEqual(['stages.deploy.command[0]', 'stages.train.command[2]', 'stages.train.env.A']);
    for (const i of issues) expect(i.message).toMatch(/NUL byte/);
  });

  test('from YAML (a "\\0" escape) with the line, before anything could start', () => {
    const text = 'name: x\nstages:\n  train:\n    env:\n      A: "x\\0y"\n    command: ["/bin/echo", "a\\x01"]\n';
    expect(issuesOf(() => parsePipelineSpec(text))).toEqual([
      expect.objectContaining({ path: 'stages.train.command[1]', line: 6 }),
      expect.objectContaining({ path: 'stages.train.env.A', line: 5 }),
    ]);
  });

  test('tab and newline stay allowed in arguments and values, not in the program name', () => {
    const ok = validatePipelineSpec(withTrain({ command: ['/bin/sh', '-c', 'echo a\n\techo b'], env: { PEM: '-----BEGIN X-----\nabc\r\n-----END X-----' } }));
    expect(ok.stages.train.command).toEqual(['/bin/sh', '-c', 'echo a\n\techo b']);
    expect(issuesOf(() => validatePipelineSpec(withTrain({ command: ['/bin/s\th'] })))).toEqual([expect.objectContaining({ path: 'stages.train.command[0]', message: expect.stringMatching(/program name/) })]);
    expect(issuesOf(() => validatePipelineSpec(withTrain({ env: { A: 'bell\x07' } })))).toEqual([expect.objectContaining({ path: 'stages.train.env.A' })]);
  });
});

describe('env size and key checks', () => {
  const envOf = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`K${i}`, 'v']));

  test(`at most ${MAX_ENV_ENTRIES} env entries, with one clear error`, () => {
    expect(Object.keys(validatePipelineSpec(withTrain({ env: envOf(MAX_ENV_ENTRIES) })).stages.train.env!)).toHaveLength(MAX_ENV_ENTRIES);
    expect(issuesOf(() => validatePipelineSpec(withTrain({ env: envOf(MAX_ENV_ENTRIES + 1) })))).toEqual([expect.objectContaining({ path: 'stages.train.env', message: `must have at most ${MAX_ENV_ENTRIES} entries` })]);
  });

  // Used to take 105 s (yaml's duplicate-key check is quadratic); bench/spec-parse.ts times it. Here:
  // it completes inside jest's timeout and reports exactly the one problem, at the env's line.
  test('a YAML spec with 100k env keys is validated (refused for its size) and a duplicate among them is found', () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => `      K${i}: v`);
    const text = `name: x\nstages:\n  train:\n    env:\n${lines.join('\n')}\n`;
    expect(issuesOf(() => parsePipelineSpec(text))).toEqual([expect.objectContaining({ path: 'stages.train.env', message: `must have at most ${MAX_ENV_ENTRIES} entries` })]);
    lines[99_998] = '      K17: again';
    expect(issuesOf(() => parsePipelineSpec(`name: x\nstages:\n  train:\n    env:\n${lines.join('\n')}\n`))).toEqual([
      { path: 'stages.train.env.K17', message: expect.stringMatching(/keys must be unique/), line: 4 + 99_999 },
    ]);
  });

  test('duplicate keys are still refused everywhere, naming the field and line; equal only by value, as yaml says', () => {
    expect(issuesOf(() => parsePipelineSpec('name: a\nname: b\n'))).toEqual([{ path: 'name', message: expect.stringMatching(/unique/), line: 2 }]);
    expect(issuesOf(() => parsePipelineSpec('name: a\nstages:\n  train:\n    command: [a, {x: 1, x: 2}]\n'))[0]).toMatchObject({ path: 'stages.train.command[1].x', line: 4 });
    // 1 and "1" are different keys for yaml; the spec's env refuses the number as a name anyway.
    expect(issuesOf(() => parsePipelineSpec('name: a\nstages:\n  train:\n    env:\n      1: a\n      "1": b\n'))[0]!.message).not.toMatch(/unique/);
  });

  test('a key named __proto__ is refused, not silently dropped', () => {
    expect(issuesOf(() => parsePipelineSpec('name: a\nstages:\n  train:\n    env:\n      __proto__: x\n'))).toEqual([{ path: 'stages.train.env.__proto__', message: 'a key may not be named "__proto__"', line: 5 }]);
  });
});

describe('YAML syntax errors in the user\'s words', () => {
  test('a second document is named as one at its line, not as yaml\'s parseAllDocuments() advice', () => {
    expect(issuesOf(() => parsePipelineSpec('name: a\n---\nname: b\n', 'p.yaml'))).toEqual([{ path: '', line: 2, message: 'a second YAML document starts here ("---"): the file may hold only one pipeline spec' }]);
  });

  test('other syntax errors keep yaml\'s text, without its "at line N, column M:" (the line is given beside it)', () => {
    const issues = issuesOf(() => parsePipelineSpec('name: x\nstages: {train: [\n', 'p.yaml'));
    expect(issues.length).toBeGreaterThan(0);
    for (const i of issues) {
      expect(i.line).toBe(3);
      expect(i.message).not.toMatch(/at line \d+, column \d+/);
      expect(i.message).toMatch(/must be sufficiently indented/);
    }
  });
});
