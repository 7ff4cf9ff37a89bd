// The SDK's public surface, as the package exports it (`tandem`, `tandem/sdk`): the typed client, the
// operators' Runs API and the history report they return.
export * from './client.js';
export * from './runs.js';
export type * from './history.js';
export * from './templates.js';
