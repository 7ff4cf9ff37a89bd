// Built-in model server for the local runtime: serves a trained checkpoint of the character model
// through vLLM's OpenAI-compatible API (programs/openai-server.ts), so the same readiness gates,
// clients and dashboards apply. Environment: TANDEM_CHECKPOINT (a checkpoint directory),
// TANDEM_MODEL_ID, TANDEM_ENDPOINT_FILE, TANDEM_PORT (0 = any free port), TANDEM_BOOT_DELAY_MS.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckpointManifest } from '../backends/checkpoints.js';
import { numberEnv, requireEnv, writeJsonAtomic } from './env.js';
import { modelFromWeights } from './model.js';
import { ModelServer } from './openai-server.js';

const checkpoint = requireEnv('TANDEM_CHECKPOINT');
const modelId = requireEnv('TANDEM_MODEL_ID');
const endpointFile = requireEnv('TANDEM_ENDPOINT_FILE');
const bootDelay = numberEnv('TANDEM_BOOT_DELAY_MS', 0);

const app = new ModelServer({ modelId, root: checkpoint });
app.server.listen(numberEnv('TANDEM_PORT', 0), '127.0.0.1', () => {
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  writeJsonAtomic(endpointFile, { url: `http://127.0.0.1:${port}`, pid: process.pid });
  // Like vLLM, the server answers /health with 503 until the weights are loaded.
  setTimeout(() => {
    try {
      const manifest = JSON.parse(readFileSync(join(checkpoint, 'manifest.json'), 'utf8')) as CheckpointManifest;
      const model = modelFromWeights(readFileSync(join(checkpoint, 'weights.json'), 'utf8'));
      app.load(model);
      console.log(`serve: ${modelId} from ${checkpoint} (step ${manifest.step}, ${model.params.length} parameters, context ${model.k}) on port ${port}`);
    } catch (e) {
      // Like a vLLM engine that cannot load its weights: say why and exit, so the deployment fails.
      console.error(`serve: cannot load ${checkpoint}: ${(e as Error).message}`);
      process.exit(1);
    }
  }, bootDelay);
});

for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => app.server.close(() => process.exit(0)));
