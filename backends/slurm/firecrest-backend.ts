// Slurm through FirecREST v2 (e.g. CSCS Alps). FirecREST job objects are mapped here; file tails and
// progress come from the filesystem endpoints.
import type { BatchJob } from './script.js';
import type { SiteApi, SiteJob } from './site-api.js';
import type { JobModel } from './firecrest-types.js';
import { FirecrestClient, type FirecrestOptions } from './firecrest-client.js';
import { SlurmApiError } from './errors.js';
import { SlurmJobBackend, type SlurmBackendOptions } from './job-backend.js';

function toSiteJob(j: JobModel): SiteJob {
  return {
    jobId: j.jobId,
    name: j.name,
    state: j.status.state,
    exitCode: j.status.exitCode ?? undefined,
    stateReason: j.status.stateReason ?? undefined,
  };
}

export class FirecrestSiteApi implements SiteApi {
  constructor(
    readonly client: FirecrestClient,
    readonly system: string,
  ) {}
  async listJobs() {
    return (await this.client.listJobs(this.system)).map(toSiteJob);
  }
  async getJob(id: string) {
    const j = await this.client.getJob(this.system, id);
    return j && toSiteJob(j);
  }
  submit({ script, directives: d, env }: BatchJob) {
    return this.client.submitJob(this.system, {
      name: d.jobName,
      script,
      workingDirectory: d.workingDirectory,
      standardOutput: d.standardOutput,
      standardError: d.standardError,
      env,
      ...(d.partition ? { partition: d.partition } : {}),
      ...(d.account ? { account: d.account } : {}),
      ...(d.reservation ? { reservation: d.reservation } : {}),
      ...(d.constraint ? { constraints: d.constraint } : {}),
    });
  }
  cancel(id: string) {
    return this.client.cancelJob(this.system, id);
  }
  async tail(path: string, lines: number) {
    try {
      return await this.client.tail(this.system, path, lines);
    } catch (e) {
      if (e instanceof SlurmApiError && (e.kind === 'not-found' || e.kind === 'invalid')) return undefined;
      throw e;
    }
  }
  async readSmall(path: string) {
    try {
      return await this.client.view(this.system, path, 64 * 1024);
    } catch (e) {
      if (e instanceof SlurmApiError && (e.kind === 'not-found' || e.kind === 'invalid')) return undefined;
      throw e;
    }
  }
}

export class FirecrestJobBackend extends SlurmJobBackend {
  readonly client: FirecrestClient;
  readonly system: string;
  constructor(opts: SlurmBackendOptions & { firecrest: FirecrestOptions; system: string }) {
    const client = new FirecrestClient(opts.firecrest);
    // Progress over FirecREST costs a request per refresh: off unless asked for.
    super(new FirecrestSiteApi(client, opts.system), { readProgress: false, ...opts });
    this.client = client;
    this.system = opts.system;
  }
}
