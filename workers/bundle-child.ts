// The child process of workers/bundle.ts: bundles the workflow code it is sent and sends it back.
import { bundleWorkflowCode } from '@temporalio/worker';
import type { BundleReply, BundleRequest } from './bundle.js';

// Webpack's progress is not the worker's log; its warnings and errors are.
const logger = { trace() {}, debug() {}, info() {}, warn: (m: string) => console.warn(m), error: (m: string) => console.error(m), log() {} };

process.once('message', (req: BundleRequest) => {
  bundleWorkflowCode({ ...req, logger }).then(
    (b): BundleReply => ({ ok: true, code: b.code }),
    (e: unknown): BundleReply => ({ ok: false, error: e instanceof Error ? e.message : String(e) }),
  ).then((reply) => process.send!(reply, () => process.disconnect()));
});
