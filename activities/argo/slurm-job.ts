// A `plugin: {slurm: {...}}` template's job: its fields and #SBATCH lines, read the way sbatch reads them.
import { failure } from '../../contract/failures.js';

/** The job a `plugin: {slurm: {...}}` template asks for: explicit fields win over #SBATCH lines. */
export interface SlurmJobSpec {
  script: string;
  jobName?: string;
  nodes: number;
  tasksPerNode: number;
  cpusPerTask: number;
  gpusPerNode: number;
  memoryMB?: number;
  walltime?: string;
  partition?: string;
  account?: string;
  constraint?: string;
  reservation?: string;
  qos?: string;
  env: Record<string, string>;
}

const SBATCH_FLAGS: Record<string, keyof SlurmJobSpec> = {
  '-N': 'nodes', '--nodes': 'nodes', '--ntasks-per-node': 'tasksPerNode', '-c': 'cpusPerTask', '--cpus-per-task': 'cpusPerTask',
  '--gpus-per-node': 'gpusPerNode', '--mem': 'memoryMB', '-t': 'walltime', '--time': 'walltime', '-p': 'partition', '--partition': 'partition',
  '-A': 'account', '--account': 'account', '-C': 'constraint', '--constraint': 'constraint', '--reservation': 'reservation', '--qos': 'qos', '-q': 'qos', '-J': 'jobName', '--job-name': 'jobName',
};

function memoryMB(v: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)([KMGT]?)B?$/i.exec(v.trim());
  if (!m) return undefined;
  const f = { K: 1 / 1024, M: 1, G: 1024, T: 1024 * 1024, '': 1 }[m[2]!.toUpperCase() as 'K'];
  return Math.ceil(Number(m[1]) * f);
}

/** Reads a Slurm plugin template's resources: its fields, then the script's #SBATCH directives. */
export function slurmJobSpec(slurm: Record<string, unknown>): SlurmJobSpec {
  const script = String(slurm.script ?? '');
  const fromScript: Record<string, string> = {};
  for (const line of script.split('\n')) {
    const m = /^#SBATCH\s+(--?[A-Za-z-]+)(?:[=\s]+(\S+))?/.exec(line.trim());
    const key = m && SBATCH_FLAGS[m[1]!];
    if (key && m[2] !== undefined && !(key in fromScript)) fromScript[key] = m[2];
  }
  const pick = (k: keyof SlurmJobSpec): string | undefined => (slurm[k] !== undefined && slurm[k] !== '' ? String(slurm[k]) : fromScript[k]);
  const int = (k: keyof SlurmJobSpec, d: number) => {
    const v = pick(k);
    const n = v === undefined ? d : Number(v);
    if (!Number.isInteger(n) || n < 0) throw failure('InvalidRequest', `plugin.slurm.${k}: ${JSON.stringify(v)} is not a whole number`);
    return n;
  };
  const mem = pick('memoryMB') ?? (slurm.memory !== undefined ? String(slurm.memory) : undefined);
  return {
    script,
    jobName: pick('jobName'),
    nodes: int('nodes', 1),
    tasksPerNode: int('tasksPerNode', 1),
    cpusPerTask: int('cpusPerTask', 1),
    gpusPerNode: int('gpusPerNode', 0),
    memoryMB: mem === undefined ? undefined : /^\d+$/.test(mem) ? Number(mem) : memoryMB(mem),
    walltime: pick('walltime'),
    partition: pick('partition'),
    account: pick('account'),
    constraint: pick('constraint'),
    reservation: pick('reservation'),
    qos: pick('qos'),
    env: Object.fromEntries(Object.entries((slurm.env ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)])),
  };
}
