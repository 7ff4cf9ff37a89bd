// Batch scripts for Slurm, generated from a JobRequest. Two rules make every parameter harmless:
// values that Slurm itself parses (#SBATCH lines, job properties) must match a strict character set or
// the request is refused, and everything the shell sees (the program and its arguments) is single-quoted,
// so no byte of user input is ever interpreted by the shell.
import { slurmTime } from '../../contract/duration.js';
import type { JobRequest } from '../types.js';
import { InvalidRequestError } from './errors.js';
import { encodeJobLabels } from '../../contract/job-labels.js';

/** The resource request in Slurm terms; rendered both as #SBATCH lines and as REST job properties. */
export interface SlurmDirectives {
  jobName: string;
  nodes: number;
  tasksPerNode: number;
  cpusPerTask: number;
  gpusPerNode: number;
  memoryMB: number;
  /** Whole minutes, as Slurm keeps time limits. */
  timeLimitMinutes: number;
  partition?: string;
  account?: string;
  constraint?: string;
  reservation?: string;
  /** Tandem's job label (contract/job-labels.ts): how placement tells its own jobs from everyone else's. */
  comment?: string;
  standardOutput: string;
  standardError: string;
  workingDirectory: string;
}

export interface BatchJob {
  directives: SlurmDirectives;
  /** The complete script, #SBATCH lines included (FirecREST and sbatch honour them). */
  script: string;
  /** Environment of the job, passed through the API (never spliced into the script). */
  env: Record<string, string>;
}

const NAME = /^[A-Za-z0-9._-]{1,128}$/;
const SAFE = /^[A-Za-z0-9._:+-]{1,128}$/;
const CONSTRAINT = /^[A-Za-z0-9_&|()[\]*:,-]{1,256}$/;
// Paths Slurm opens for the job: absolute, no spaces, quotes, '%' patterns or shell metacharacters.
const PATH = /^\/[A-Za-z0-9._/+-]{0,1023}$/;
const LABEL = /^[A-Za-z0-9._;=%-]{1,1024}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

function check(field: string, value: string, re: RegExp): string {
  if (!re.test(value)) throw new InvalidRequestError(`${field} ${JSON.stringify(value)} is not accepted by Tandem's Slurm backend (allowed: ${re.source})`);
  return value;
}

function positiveInt(field: string, n: number, min = 1): number {
  if (!Number.isInteger(n) || n < min) throw new InvalidRequestError(`${field} must be an integer ≥ ${min}, got ${n}`);
  return n;
}

/** POSIX single-quoting: the only character that needs care inside '…' is the quote itself. */
export function shellQuote(value: string): string {
  if (value.includes('\0')) throw new InvalidRequestError('arguments must not contain NUL bytes');
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export function directivesFor(req: JobRequest, workDir: string): SlurmDirectives {
  const r = req.resources;
  const jobName = check('job name', req.name, NAME);
  const dir = check('working directory', workDir.replace(/\/+$/, '') || '/', PATH);
  return {
    jobName,
    nodes: positiveInt('nodes', r.nodes),
    tasksPerNode: positiveInt('tasksPerNode', r.tasksPerNode),
    cpusPerTask: positiveInt('cpusPerTask', r.cpusPerTask),
    gpusPerNode: positiveInt('gpusPerNode', r.gpusPerNode, 0),
    memoryMB: positiveInt('memoryMB', r.memoryMB),
    timeLimitMinutes: Math.max(1, Math.ceil(req.walltimeMs / 60_000)),
    partition: r.partition === undefined ? undefined : check('partition', r.partition, SAFE),
    account: r.account === undefined ? undefined : check('account', r.account, SAFE),
    constraint: r.constraint === undefined ? undefined : check('constraint', r.constraint, CONSTRAINT),
    reservation: r.reservation === undefined ? undefined : check('reservation', r.reservation, SAFE),
    comment: req.labels === undefined ? undefined : check('job label', encodeJobLabels(req.labels), LABEL),
    standardOutput: `${dir}/${jobName}.out`,
    standardError: `${dir}/${jobName}.err`,
    workingDirectory: dir,
  };
}

export function sbatchLines(d: SlurmDirectives): string[] {
  const lines = [
    `--job-name=${d.jobName}`,
    `--nodes=${d.nodes}`,
    `--ntasks-per-node=${d.tasksPerNode}`,
    `--cpus-per-task=${d.cpusPerTask}`,
    ...(d.gpusPerNode > 0 ? [`--gpus-per-node=${d.gpusPerNode}`] : []),
    `--mem=${d.memoryMB}M`,
    `--time=${slurmTime(d.timeLimitMinutes * 60_000)}`,
    ...(d.partition ? [`--partition=${d.partition}`] : []),
    ...(d.account ? [`--account=${d.account}`] : []),
    ...(d.constraint ? [`--constraint=${d.constraint}`] : []),
    ...(d.reservation ? [`--reservation=${d.reservation}`] : []),
    ...(d.comment ? [`--comment=${d.comment}`] : []),
    // Tandem fails over and restores from checkpoints itself; a silent requeue would fight that.
    '--no-requeue',
    `--chdir=${d.workingDirectory}`,
    `--output=${d.standardOutput}`,
    `--error=${d.standardError}`,
  ];
  return lines.map((l) => `#SBATCH ${l}`);
}

export interface ScriptOptions {
  workDir: string;
  /** Site name, passed to the job as TANDEM_SITE (checkpoint manifests record it). */
  site: string;
}

export function renderBatchJob(req: JobRequest, opts: ScriptOptions): BatchJob {
  if (req.command.length === 0) throw new InvalidRequestError('the job has no command');
  const directives = directivesFor(req, opts.workDir);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.env)) {
    check('environment variable name', k, ENV_NAME);
    if (v.includes('\0')) throw new InvalidRequestError(`environment variable ${k} contains a NUL byte`);
    env[k] = v;
  }
  env.TANDEM_JOB_ID = directives.jobName;
  env.TANDEM_SITE = opts.site;
  env.TANDEM_PROGRESS_FILE = progressFile(directives);
  const script = [
    '#!/bin/bash',
    ...sbatchLines(directives),
    '# Generated by Tandem. Every argument below is single-quoted: nothing in it is expanded by the shell.',
    `exec ${req.command.map(shellQuote).join(' ')}`,
    '',
  ].join('\n');
  return { directives, script, env };
}

export function progressFile(d: Pick<SlurmDirectives, 'workingDirectory' | 'jobName'>): string {
  return `${d.workingDirectory}/${d.jobName}.progress.json`;
}
