// No input kills a long-lived process (issue #27, contract/limits.ts): deeply nested YAML/JSON is
// refused before any recursive parser or walker sees it. Before, two authenticated executor-plugin
// requests whose pipeline text nested 20 000 `{"a":` exhausted V8's heap (the server died), and the
// same spec parsed twice in one process killed Node. Here: the real plugin HTTP server (its runs
// recorded instead of started: nothing should start), the spec, policy, Argo and manifest loaders.
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { createExecutorPluginServer, listen, type PluginRuns } from '../../argo/executor-plugin/server.js';
import { parsePipelineSpec, SpecError } from '../../contract/parse.js';
import { parseTenantPolicy } from '../../contract/tenant-policy.js';
import { loadArgoText } from '../../argo/lint/load.js';
import { jsonLimitProblem, parseJsonLimited, yamlLimitProblem, MAX_NESTING } from '../../contract/limits.js';

const DEPTH = 20_000;
const deepJsonMap = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
const deepFlowSeq = (n: number) => '['.repeat(n) + ']'.repeat(n);
// Block style nests by indentation, compact style by `- - - …` on one line: neither has a bracket.
const deepBlock = (n: number) => Array.from({ length: n }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' 1\n';
const deepCompact = (n: number) => `${'- '.repeat(n)}leaf\n`;

const TOKEN = 'agent-token-' + randomUUID();
const started: string[] = [];
const runs: PluginRuns = {
  ensure: async (id) => void started.push(id),
  observe: async (workflowId) => ({ workflowId, execution: 'RUNNING' }),
  cancel: async () => undefined,
};
let server: Server;
let url: string;
beforeAll(async () => {
  server = createExecutorPluginServer({ token: () => TOKEN, runs });
  url = `http://127.0.0.1:${await listen(server, 0, '127.0.0.1')}/api/v1/template.execute`;
});
afterAll(() => server?.close());

const execute = async (pipeline: unknown, raw?: string) => {
  const body = raw ?? JSON.stringify({ workflow: { metadata: { name: 'wf', uid: randomUUID() } }, template: { name: 't', plugin: { tandem: { pipeline } } } });
  const r = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body });
  return { status: r.status, json: (await r.json()) as { node?: { phase: string; message: string }; error?: string } };
};

test('executor plugin: deep pipeline text, twice and more, fails its node clearly and the server keeps answering', async () => {
  for (const [k, text] of [`name: x\nextra: ${deepJsonMap(DEPTH)}\n`, deepJsonMap(DEPTH), `name: x\nextra: ${deepFlowSeq(DEPTH)}\n`, `name: x\n${deepBlock(300)}`, `name: x\nextra:\n  ${deepCompact(DEPTH)}`].entries()) {
    for (let i = 0; i < 2; i++) {
      const r = await execute(text);
      expect({ k, status: r.status, error: r.json.error }).toEqual({ k, status: 200, error: undefined });
      expect(r.json.node).toMatchObject({ phase: 'Failed' });
      expect(r.json.node!.message).toMatch(/plugin\.tandem\.pipeline.*(nest deeper than 64 levels|Implicit keys)/);
    }
  }
  expect(started).toEqual([]);
  // A deep request body (the pipeline as a mapping, or anything else) is a 400 before any schema walks it.
  const deepBody = `{"workflow":{"metadata":{"name":"w"}},"template":{"plugin":{"tandem":{"pipeline":${deepJsonMap(DEPTH)}}}}}`;
  for (let i = 0; i < 2; i++) {
    const r = await execute(undefined, deepBody);
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/nest deeper than 64 levels/);
  }
  // Still alive, still right.
  const ok = await execute('name: fine\n');
  expect(ok.status).toBe(200);
  expect(started).toHaveLength(1);
});

test('the loaders refuse deep text naming the line, every time, in one process', () => {
  for (let i = 0; i < 3; i++) {
    const e = (() => {
      try {
        parsePipelineSpec(`name: x\nextra: ${deepJsonMap(DEPTH)}\n`, 'spec.yaml');
      } catch (err) {
        return err as SpecError;
      }
    })();
    expect(e).toBeInstanceOf(SpecError);
    expect(e!.issues[0]).toMatchObject({ line: 2, message: expect.stringMatching(/nest deeper than 64/) });
    expect(() => parseTenantPolicy(`tenants:\n  a: ${deepFlowSeq(DEPTH)}\n`, 'policy.yaml')).toThrow(/nest deeper than 64/);
    expect(loadArgoText(`apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nspec: ${deepJsonMap(DEPTH)}\n`, 'wf.yaml').issues[0]).toMatchObject({ source: 'wf.yaml', message: expect.stringMatching(/nest deeper than 64/) });
    expect(loadArgoText(`x:\n  ${deepCompact(DEPTH)}`, 'wf.yaml').issues[0]!.message).toMatch(/nest deeper than 64/);
  }
});

test('the limits: exact at the boundary, brackets inside strings do not count, size capped', () => {
  expect(jsonLimitProblem(deepFlowSeq(MAX_NESTING))).toBeUndefined();
  expect(jsonLimitProblem(deepFlowSeq(MAX_NESTING + 1))).toMatchObject({ line: 1 });
  expect(jsonLimitProblem(JSON.stringify({ s: '['.repeat(10_000), t: 'a\\"[[[' }))).toBeUndefined();
  expect(yamlLimitProblem(`a: "${'['.repeat(10_000)}"\nb: '{{{{'\n`)).toBeUndefined();
  expect(yamlLimitProblem(deepBlock(MAX_NESTING))).toBeUndefined();
  expect(yamlLimitProblem(deepBlock(MAX_NESTING + 1))).toMatchObject({ line: MAX_NESTING + 1 });
  expect(yamlLimitProblem('x'.repeat(100), 64, 10)).toMatchObject({ message: expect.stringMatching(/100 bytes, over the limit of 10/) });
  expect(() => parseJsonLimited(deepJsonMap(DEPTH))).toThrow(/line 1: collections nest deeper than 64/);
  expect(parseJsonLimited('{"a":[1,{"b":2}]}')).toEqual({ a: [1, { b: 2 }] });
});
