// Writes the JSON Schema of PipelineSpec into templates/ so editors can validate specs as users type.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { PipelineSpecSchema } from './pipeline.js';

export function pipelineJsonSchema(): Record<string, unknown> {
  return {
    $id: 'https://tandem.dev/schemas/pipeline.v1alpha1.json',
    title: 'Tandem PipelineSpec',
    ...z.toJSONSchema(PipelineSpecSchema, { io: 'input', unrepresentable: 'any' }),
  };
}

export const SCHEMA_PATH = fileURLToPath(new URL('../templates/pipeline.schema.json', import.meta.url));

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(SCHEMA_PATH, JSON.stringify(pipelineJsonSchema(), null, 2) + '\n');
  console.log(`wrote ${SCHEMA_PATH}`);
}
