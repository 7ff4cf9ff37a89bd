// Local deployments of one pipeline retire each other only once gated: with real model server processes.
// (Two runs of one pipeline deploying at once used to stop the older run's server before its readiness
// gate had passed, and that run's gate then waited out its timeout on a dead endpoint.)
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalServingBackend } from '../backends/local-serving.js';
import { writeCheckpoint } from '../backends/checkpoints.js';
import { CharModel, weightsJson } from '../programs/model.js';
import { Rng } from '../programs/rng.js';
import { stopLocalDeployments } from './helpers.js';

const homes: string[] = [];
let checkpoint: string;
beforeAll(() => {
  // A real (untrained) checkpoint of the built-in character model, which the built-in server loads.
  const model = CharModel.init({ vocab: ['\n', 'a', 'b'], context: 2, embed: 2, hidden: 2 }, new Rng(1));
  const root = mkdtempSync(join(tmpdir(), 'tandem-serving-ckpt-'));
  homes.push(root);
  checkpoint = writeCheckpoint(root, 1, { 'weights.json': weightsJson(model) }, { job: 'j', site: 'local' });
});
afterAll(async () => {
  for (const h of homes) await stopLocalDeployments(h);
});

function backend(): LocalServingBackend {
  const h = mkdtempSync(join(tmpdir(), 'tandem-serving-'));
  homes.push(h);
  return new LocalServingBackend(h);
}

const deploy = (s: LocalServingBackend, name: string) => s.deploy({ name, model: 'm', checkpoint, pipeline: 'p', tenant: 't', workflowId: name });
const state = (s: LocalServingBackend, name: string) => s.rows().find((r) => r.name === name)?.state;

test('a newer revision that passes its gate retires the older gated one', async () => {
  const s = backend();
  await deploy(s, 'p-a');
  expect(await s.retireOthers('p-a')).toEqual([]);
  await deploy(s, 'p-b');
  expect(await s.retireOthers('p-b')).toEqual([{ name: 'p-a', by: 'p-b' }]);
  expect([state(s, 'p-a'), state(s, 'p-b')]).toEqual(['retired', 'serving']);
});

test('two revisions deploying at once: the newer gate passing first leaves the older serving until its own gate', async () => {
  const s = backend();
  const a = await deploy(s, 'q-a');
  await deploy(s, 'q-b');
  // q-b passes its gate while q-a is still on its way to its own: q-a keeps serving.
  expect(await s.retireOthers('q-b')).toEqual([]);
  expect(state(s, 'q-a')).toBe('serving');
  const health = await fetch(`${a.endpoint}/health`);
  expect(health.status).toBe(200);
  // q-a's gate passes: the newest gated revision (q-b) serves, q-a is retired by it.
  expect(await s.retireOthers('q-a')).toEqual([{ name: 'q-a', by: 'q-b' }]);
  expect([state(s, 'q-a'), state(s, 'q-b')]).toEqual(['retired', 'serving']);
});
