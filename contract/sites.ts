// The sites file (TANDEM_SITES_FILE): the Slurm sites a worker may train on and fail over between.
// Secrets are never written here: a site names the environment variable that holds its secret, so the
// file can live in version control and nothing secret reaches a workflow history.
import { z } from 'zod';
import { parseYamlWith } from './parse.js';

const name = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'a site name is lower-case letters, digits and dashes');
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'the name of an environment variable');

const common = {
  name,
  /** Where the site's jobs write output and progress files, as the site sees the path. */
  workDir: z.string().min(1),
  /** Run directories (data, checkpoints) as this worker reaches them; default `<workDir>/tandem`. */
  root: z.string().min(1).optional(),
  /** How often a job's status is refreshed (ms). */
  statusIntervalMs: z.number().int().positive().optional(),
  /** Request timeout (ms) for the site's API and health probe. */
  timeoutMs: z.number().int().positive().default(10_000),
  /** Retries of a failed request before it counts as one failed observation. */
  retries: z.number().int().min(0).max(10).default(3),
};

const SlurmrestdSite = z
  .strictObject({
    ...common,
    api: z.literal('slurmrestd'),
    /** Unix socket of a local slurmrestd (rest_auth/local) … */
    socket: z.string().min(1).optional(),
    /** … or its URL (rest_auth/jwt). */
    url: z.url().optional(),
    user: z.string().min(1).optional(),
    /** Variable holding the JWT for rest_auth/jwt. */
    tokenEnv: envName.optional(),
    apiVersion: z.string().optional(),
  })
  .refine((s) => !!s.socket !== !!s.url, { message: 'give exactly one of "socket" and "url"', path: ['socket'] });

const FirecrestSite = z.strictObject({
  ...common,
  api: z.literal('firecrest'),
  /** FirecREST v2 base URL, e.g. https://api.cscs.ch/hpc/firecrest/v2 */
  url: z.url(),
  /** The FirecREST system (cluster) name; default: the site name. */
  system: z.string().min(1).optional(),
  tokenUrl: z.url(),
  clientId: z.string().min(1),
  /** Variable holding the OIDC client secret. */
  clientSecretEnv: envName,
});

export const SiteSchema = z.discriminatedUnion('api', [SlurmrestdSite, FirecrestSite]);
export type SiteConfig = z.output<typeof SiteSchema>;

export const SitesFileSchema = z
  .strictObject({ sites: z.array(SiteSchema).min(1, 'list at least one site') })
  .refine((f) => new Set(f.sites.map((s) => s.name)).size === f.sites.length, { message: 'site names must be unique', path: ['sites'] });
export type SitesFile = z.output<typeof SitesFileSchema>;

export function parseSitesFile(text: string, source = 'sites file'): SitesFile {
  return parseYamlWith(SitesFileSchema, text, source, 'sites file', 'with a "sites" list');
}
