// The routing file of a migrating site, `<TANDEM_HOME>/sites/<site>/routing.json`: written by the
// staged migration (setRouting, and its undo), read by every pipeline that submits a Slurm job at the
// site (siteRouting). A file rather than a query of the migration workflow: pipelines keep routing
// while the migration's worker is down, the write is atomic (rename), and the undo that falls back to
// 0% is the same write. Workers that run pipelines must share TANDEM_HOME with the one that runs the
// migration, as they already share run directories.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Runtime } from '../contract/pipeline.js';
import type { Routing } from '../contract/routing.js';
import type { JobBackend } from '../backends/types.js';
import { siteOf } from './runtimes.js';

const NOT_MIGRATING: Routing = { percent: 0, policies: [] };

export function routingFile(home: string, site: string): string {
  return join(home, 'sites', site, 'routing.json');
}

export function readRouting(home: string, site: string): Routing {
  const file = routingFile(home, site);
  if (!existsSync(file)) return NOT_MIGRATING;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Routing;
  } catch (e) {
    throw new Error(`routing file ${file} is not valid JSON (${(e as Error).message}); the migration writes it, do not edit it by hand`);
  }
}

export function writeRouting(home: string, site: string, routing: Routing): void {
  const file = routingFile(home, site);
  mkdirSync(join(home, 'sites', site), { recursive: true });
  writeFileSync(`${file}.tmp`, JSON.stringify(routing));
  renameSync(`${file}.tmp`, file);
}

export interface SiteRoutingInput {
  runtime: Runtime;
  stage: string;
  /** Placement's choice, when it made one. */
  site?: string;
}

/**
 * @param resolve the backend that would run the job (activities/runtimes.ts resolveBackend), or
 *   undefined when none is configured (submitJob then fails with the clear reason).
 */
export function createRoutingActivities(home: string, resolve: (input: SiteRoutingInput) => JobBackend | undefined) {
  return {
    /** The Slurm site the job would run at and its routing (no `pools`: not migrating); undefined when the job would not run on Slurm. */
    async siteRouting(input: SiteRoutingInput): Promise<{ site: string; routing: Routing } | undefined> {
      const backend = resolve(input);
      if (!backend || backend.runtime !== 'slurm') return undefined;
      const site = siteOf(backend);
      return { site, routing: readRouting(home, site) };
    },
  };
}

export type RoutingActivities = ReturnType<typeof createRoutingActivities>;
