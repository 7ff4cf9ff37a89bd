// Every run directory (<home>/runs/<runKey>: data, checkpoints, catalog) belongs to one tenant. The
// SDK refuses to resume another tenant's run key (sdk/client.ts), but a client that starts
// `hybridPipeline` directly can name any `resume.runKey`; so the worker records the owner when it
// first creates a run's directories and refuses a run of another tenant that would reuse them.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { failure } from '../contract/failures.js';

export interface RunOwner {
  tenant: string;
  /** The workflow that created the directory (for the error message and operators). */
  workflowId: string;
}

const OWNER_FILE = 'owner.json';

/**
 * Claims `root` for `owner.tenant` (created with the owner record when new), or refuses with a
 * non-retryable TenantPolicyDenied when another tenant owns it. Directories from before ownership
 * was recorded are claimed by their next user.
 */
export function claimRunDir(root: string, runKey: string, owner: RunOwner): void {
  mkdirSync(root, { recursive: true });
  const file = join(root, OWNER_FILE);
  try {
    // 'wx': exactly one claimant wins when two attempts race.
    writeFileSync(file, JSON.stringify(owner) + '\n', { flag: 'wx', mode: 0o644 });
    return;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  let recorded: Partial<RunOwner> = {};
  try {
    recorded = JSON.parse(readFileSync(file, 'utf8')) as Partial<RunOwner>;
  } catch {
    throw failure('TenantPolicyDenied', `run key ${JSON.stringify(runKey)}: its owner record ${file} is unreadable; an operator must check it before any run uses this directory`);
  }
  if (recorded.tenant !== owner.tenant) {
    throw failure('TenantPolicyDenied', `run key ${JSON.stringify(runKey)} belongs to tenant ${JSON.stringify(recorded.tenant)} (run ${recorded.workflowId ?? 'unknown'}); a run of tenant ${JSON.stringify(owner.tenant)} may not use its data or checkpoints`);
  }
}
