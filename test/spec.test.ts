// The PipelineSpec boundary: good specs get defaults, bad ones name the field (and the YAML line).
import { readFileSync } from 'node:fs';
import { parsePipelineSpec, validatePipelineSpec } from '../contract/parse.js';
import { pipelineJsonSchema, SCHEMA_PATH } from '../contract/export-schema.js';
import { durationMs, parseDuration, slurmTime } from '../contract/duration.js';
import { classifyJobState, JOB_STATES } from '../contract/outcome.js';
import { jobName } from '../workflows/pipeline.js';
import { DEMO_SPEC } from '../cli/dev.js';

import { issuesOf } from './spec-issues.js';

describe('PipelineSpec', () => {
  test('a minimal spec gets every default', () => {
    const s = validatePipelineSpec({ name: 'mini' });
    expect(s).toMatchObject({ tenant: 'default', qos: 'silver', priority: 100, stages: { train: { runtime: 'auto', steps: 200, resources: { nodes: 1, walltime: '1h' } }, checkpoint: { keep: 3 } } });
  });

  test('the shipped demo spec is valid YAML and JSON says the same thing', () => {
    const yaml = parsePipelineSpec(readFileSync(DEMO_SPEC, 'utf8'), 'demo.yaml');
    const json = parsePipelineSpec(JSON.stringify(yaml), 'demo.json');
    expect(json).toEqual(yaml);
    expect(yaml.stages.deploy.model).toBe('tandem/demo-charlm');
  });

  test('bad fields are named with their path and YAML line', () => {
    const text = ['name: demo', 'qos: platinum', 'stages:', '  train:', '    steps: 0', '    gpus: 4', '    resources:', '      walltime: forever', '      partition: "debug; rm -rf /"'].join('\n');
    const issues = issuesOf(() => parsePipelineSpec(text, 'bad.yaml'));
    const byPath = Object.fromEntries(issues.map((i) => [i.path, i]));
    expect(byPath['qos']).toMatchObject({ line: 2, message: expect.stringMatching(/gold|silver|bronze/) });
    expect(byPath['stages.train.steps']).toMatchObject({ line: 5 });
    expect(byPath['stages.train.gpus']).toMatchObject({ line: 6, message: 'unknown field "gpus"' });
    expect(byPath['stages.train.resources.walltime']).toMatchObject({ line: 8, message: expect.stringMatching(/duration/) });
    expect(byPath['stages.train.resources.partition']).toMatchObject({ line: 9, message: expect.stringMatching(/only letters/) });
  });

  test('the error message lists every issue with the file name', () => {
    expect(() => parsePipelineSpec('name: Not_A_Label\n', 'x.yaml')).toThrow(/^x\.yaml: invalid pipeline spec\n {2}- name \(line 1\): must be lower-case/);
  });

  test('syntax errors and non-mappings are reported, not crashed on', () => {
    expect(issuesOf(() => parsePipelineSpec('name: [unclosed\n', 's.yaml'))[0]).toMatchObject({ line: expect.any(Number) });
    expect(issuesOf(() => parsePipelineSpec('- a\n- b\n'))[0]!.message).toMatch(/must be a mapping/);
    expect(issuesOf(() => parsePipelineSpec('name: a\nname: b\n'))[0]!.message).toMatch(/unique/i);
  });

  test('cross-field rules and retry overrides', () => {
    expect(issuesOf(() => validatePipelineSpec({ name: 'x', stages: { train: { steps: 10, checkpointEvery: 50 } } }))).toEqual([
      expect.objectContaining({ path: 'stages.train.checkpointEvery', message: 'must not exceed stages.train.steps (10)' }),
    ]);
    expect(issuesOf(() => validatePipelineSpec({ name: 'x', retry: { maxAttempts: 0, backoffCoefficient: 0.5 } })).map((i) => i.path)).toEqual(['retry.maxAttempts', 'retry.backoffCoefficient']);
    expect(issuesOf(() => validatePipelineSpec({ name: 'x', deadline: 'tomorrow' }))[0]!.path).toBe('deadline');
    expect(validatePipelineSpec({ name: 'x', stages: { deploy: { retry: { maxAttempts: 5 } } } }).stages.deploy.retry).toEqual({ maxAttempts: 5 });
  });

  test('the committed JSON Schema is up to date (npm run schema regenerates it)', () => {
    expect(JSON.parse(readFileSync(SCHEMA_PATH, 'utf8'))).toEqual(pipelineJsonSchema());
    const schema = pipelineJsonSchema() as { properties: Record<string, unknown>; required: string[] };
    expect(schema.required).toEqual(['name']);
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['name', 'tenant', 'qos', 'priority', 'deadline', 'stages', 'retry']));
  });
});

describe('durations, job names and outcome classification', () => {
  test('durations', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration(2)).toBe(2000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('5 minutes')).toBeUndefined();
    expect(parseDuration('')).toBeUndefined();
    expect(() => durationMs('soon')).toThrow(/not a duration/);
    expect(slurmTime(durationMs('1d2h30m'))).toBe('1-02:30:00');
    expect(slurmTime(1)).toBe('0-00:01:00');
  });

  test('job names are deterministic and safe for Slurm, Kubernetes and files', () => {
    expect(jobName('Demo_Run 1', 'train', 2)).toBe('tandem-demo-run-1-train-2');
    expect(jobName('x'.repeat(80), 'deploy', 1)).toMatch(/^tandem-x{40}-deploy-1$/);
  });

  test('every job state has one outcome, as ARCHITECTURE.md ("How a stage runs") says', () => {
    const table = Object.fromEntries(JOB_STATES.map((s) => [s, classifyJobState(s)]));
    expect(table).toEqual({
      PENDING: 'active', RUNNING: 'active', COMPLETING: 'active', COMPLETED: 'success',
      FAILED: 'job-failure', OUT_OF_MEMORY: 'job-failure', TIMEOUT: 'job-failure', DEADLINE: 'job-failure',
      NODE_FAIL: 'infrastructure', PREEMPTED: 'infrastructure', BOOT_FAIL: 'infrastructure', LOST: 'infrastructure',
      CANCELLED: 'cancelled',
    });
  });
});
