// OIDC client-credentials tokens for FirecREST: the shared token client (backends/oidc.ts), with its
// failures classified the Slurm clients' way (backends/slurm/errors.ts): no answer, 408, 429 and 5xx
// are "could not observe" (retried, never a job failure), every other refusal is invalid.
import { OidcTokenSource, type TokenEndpointError } from '../oidc.js';
import { SlurmApiError } from './errors.js';

export type { ClientCredentials, TokenSourceOptions } from '../oidc.js';

export class ClientCredentialsTokenSource extends OidcTokenSource {
  protected override fail(e: TokenEndpointError): Error {
    return new SlurmApiError(e.transient ? 'observation' : 'invalid', e.message, e.status);
  }
}
