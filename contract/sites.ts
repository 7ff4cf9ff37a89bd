// The sites file (TANDEM_SITES_FILE): the Slurm sites a worker may train on and fail over between.
// Secrets are never written here: a site names the environment variable that holds its secret, so the
// file can live in version control and nothing secret reaches a workflow history.
import { z } from 'zod';
import { parseYamlWith } from './parse.js';
import { endpointUrlProblem } from './endpoint-url.js';

const name = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'a site name is lower-case letters, digits and dashes');

// The worker reads the variable a site names and sends its value to the site (as a token or a client
// secret), so it must be a variable set for that purpose: never one of the system's or the runtime's
// own (PATH, HOME, LD_PRELOAD, NODE_OPTIONS …), whose value would otherwise leave the worker.
const SYSTEM_VARIABLES = new Set([
  'PATH', 'HOME', 'USER', 'USERNAME', 'LOGNAME', 'SHELL', 'PWD', 'OLDPWD', 'SHLVL', 'TERM', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR', 'TMP', 'TEMP',
  'HOSTNAME', 'HOST', 'MAIL', 'EDITOR', 'VISUAL', 'PAGER', 'DISPLAY', 'IFS', 'PS1', 'PS2', 'PS4', 'UID', 'EUID', 'GID', 'PPID', 'CDPATH', 'ENV',
  'KUBECONFIG', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'ALL_PROXY', 'SUDO_USER', 'SUDO_UID', 'SUDO_GID', 'SUDO_COMMAND',
]);
const SYSTEM_PREFIXES = ['LD_', 'DYLD_', 'LC_', 'XDG_', 'BASH_', 'NODE_', 'NPM_', 'SSH_', 'TEMPORAL_'];
export function secretVariableProblem(v: string): string | undefined {
  if (!/^[A-Z_][A-Z0-9_]*$/.test(v)) return 'must be the name of an environment variable in upper case (letters, digits, "_"), e.g. LUGANO_CLIENT_SECRET';
  if (SYSTEM_VARIABLES.has(v)) return `${v} is a system variable, not a secret: name a variable set for this site's secret`;
  const prefix = SYSTEM_PREFIXES.find((p) => v.startsWith(p));
  if (prefix) return `variables starting with ${prefix} belong to the system or the runtime, not to a secret: name a variable set for this site's secret`;
  return undefined;
}
const envName = z.string().superRefine((v, ctx) => {
  const why = secretVariableProblem(v);
  if (why) ctx.addIssue({ code: 'custom', message: why });
});

/** An API or token endpoint: http(s) only, no credentials in it, no link-local or metadata host. */
const endpoint = z.string().superRefine((v, ctx) => {
  const why = endpointUrlProblem(v);
  if (why) ctx.addIssue({ code: 'custom', message: why });
});

// Node's timers hold at most 2^31-1 ms; a larger value fires after 1 ms (every request would time out).
const MAX_TIMER_MS = 2 ** 31 - 1;
const MAX_REQUEST_TIMEOUT_MS = 600_000;

const common = {
  name,
  /** Where the site's jobs write output and progress files, as the site sees the path. */
  workDir: z.string().min(1),
  /** Run directories (data, checkpoints) as this worker reaches them; default `<workDir>/tandem`. */
  root: z.string().min(1).optional(),
  /** How often a job's status is refreshed (ms). */
  statusIntervalMs: z.number().int().positive().max(MAX_TIMER_MS, `must be at most ${MAX_TIMER_MS} ms (the longest timer Node can set)`).optional(),
  /** Request timeout (ms) for the site's API and health probe. */
  timeoutMs: z.number().int().positive().max(MAX_REQUEST_TIMEOUT_MS, `must be at most ${MAX_REQUEST_TIMEOUT_MS} ms (10 minutes) for one request`).default(10_000),
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
    url: endpoint.optional(),
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
  url: endpoint,
  /** The FirecREST system (cluster) name; default: the site name. */
  system: z.string().min(1).optional(),
  tokenUrl: endpoint,
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
