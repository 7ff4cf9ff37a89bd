// Slurm through slurmrestd (sites without FirecREST).
import { SlurmJobBackend, type SlurmBackendOptions } from './job-backend.js';
import { SlurmrestdClient, SlurmrestdSiteApi, type SlurmrestdOptions } from './slurmrestd-client.js';

export class SlurmrestdJobBackend extends SlurmJobBackend {
  readonly client: SlurmrestdClient;
  constructor(opts: SlurmBackendOptions & { rest: SlurmrestdOptions }) {
    const client = new SlurmrestdClient(opts.rest);
    super(new SlurmrestdSiteApi(client), opts);
    this.client = client;
  }
}
