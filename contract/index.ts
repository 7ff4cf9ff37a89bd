// The pipeline contract, as the package exports it (`tandem/spec`): the spec's zod schemas and types,
// parsing with line numbers, run status and timeline types, tuning, the failure table and input errors.
// Sandbox-safe like the modules it re-exports, so workflow code may import it too.
export * from './pipeline.js';
export * from './parse.js';
export type * from './status.js';
export * from './tuning.js';
export * from './failures.js';
export * from './input-error.js';
export * from './duration.js';
