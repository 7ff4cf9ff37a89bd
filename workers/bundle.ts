// The workflow bundle, built by webpack in a child process (workers/bundle-child.ts). Built in the
// worker's own process, webpack's memory stayed with the worker for its whole life: measured here, the
// worker's RSS went from 260 MB to 450 MB while bundling and stayed there (the heap kept 54 MB of it,
// the rest V8 and malloc never gave back); built in a child it stays at 270 MB, because the child's
// memory goes back to the system when it exits. The bundle is the same code either way.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { nodeLoaderArgs } from '../programs/commands.js';

/** What bundleWorkflowCode is given (paths only, so that it crosses to the child as JSON). */
export interface BundleRequest {
  workflowsPath: string;
  failureConverterPath?: string;
  payloadConverterPath?: string;
  workflowInterceptorModules?: string[];
}

export type BundleReply = { ok: true; code: string } | { ok: false; error: string };

const CHILD = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './bundle-child.ts' : './bundle-child.js', import.meta.url));

/** Bundles in a child process; rejects with the bundler's own message when webpack fails. */
export function bundleInChild(req: BundleRequest): Promise<WorkflowBundleWithSourceMap> {
  return new Promise((resolve, reject) => {
    // The child's warnings go to this process's stderr; stdout stays the worker's.
    const child = fork(CHILD, [], { execArgv: nodeLoaderArgs(), stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    let settled = false;
    const settle = (f: () => void) => {
      if (settled) return;
      settled = true;
      f();
    };
    child.once('message', (m: BundleReply) => settle(() => (m.ok ? resolve({ code: m.code, sourceMap: '' }) : reject(new Error(`bundling the workflow code failed: ${m.error}`)))));
    child.once('error', (e) => settle(() => reject(new Error(`the workflow bundler could not start: ${e.message}`))));
    child.once('exit', (code, signal) => settle(() => reject(new Error(`the workflow bundler stopped (${signal ?? `exit code ${code}`}) before it sent the bundle`))));
    child.send(req);
  });
}
