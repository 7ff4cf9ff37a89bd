// Tandem's search attributes (TandemTenant, TandemPipeline, …) in a namespace: registered once by
// `tandem setup` (or the first launch that finds them missing, where the server permits), never
// listed or added on every launch. Temporal Cloud manages search attributes in its own console and
// API (`tcld namespace search-attributes add`) and refuses the operator service's call; so does a
// self-hosted server whose authorizer does not grant the caller admin rights.
import type { Client } from '@temporalio/client';
import { TANDEM_SEARCH_ATTRIBUTES } from '../contract/search-attributes.js';
import { errorChain, grpcCodeOf } from '../contract/error-chain.js';

const GRPC_INVALID_ARGUMENT = 3;
const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNIMPLEMENTED = 12;
const GRPC_UNAUTHENTICATED = 16;
/** INDEXED_VALUE_TYPE_KEYWORD in temporal.api.enums.v1. */
const KEYWORD = 2;

export interface SearchAttributesReport {
  namespace: string;
  /** Added by this call. */
  registered: string[];
  /** Already there (as Keyword). */
  present: string[];
}

/** The namespace lacks Tandem's search attributes and this caller cannot add them. */
export class SearchAttributesMissing extends Error {
  constructor(
    readonly namespace: string,
    reason: string,
  ) {
    super(
      `namespace ${namespace} lacks Tandem's search attributes (${TANDEM_SEARCH_ATTRIBUTES.map((a) => `${a.name}:Keyword`).join(', ')}) and the server refused to add them: ${reason}. ` +
        'Run `tandem setup` with an identity that may administer the namespace, or register them where the namespace is managed (Temporal Cloud: `tcld namespace search-attributes add`, or the Cloud UI).',
    );
    this.name = 'SearchAttributesMissing';
  }
}

/** A workflow start the server refused because a search attribute it sets is not registered. */
export function isMissingSearchAttribute(e: unknown): boolean {
  // The SDK wraps the server's status ("3 INVALID_ARGUMENT: Namespace x has no mapping defined for
  // search attribute TandemTenant") in a ServiceError("Failed to start Workflow"): read the chain.
  const message = errorChain(e).map((l) => l.message ?? '').join(' ');
  return grpcCodeOf(e) === GRPC_INVALID_ARGUMENT && /search attribute/i.test(message) && TANDEM_SEARCH_ATTRIBUTES.some((a) => message.includes(a.name));
}

export async function registerSearchAttributes(client: Client, namespace: string): Promise<SearchAttributesReport> {
  const { operatorService } = client.connection;
  let existing: Record<string, unknown>;
  try {
    existing = (await operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};
  } catch (e) {
    throw refusal(e, namespace);
  }
  const present = TANDEM_SEARCH_ATTRIBUTES.filter((a) => a.name in existing).map((a) => a.name);
  const missing = TANDEM_SEARCH_ATTRIBUTES.filter((a) => !(a.name in existing)).map((a) => a.name);
  if (missing.length) {
    try {
      await operatorService.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(missing.map((n) => [n, KEYWORD])) });
    } catch (e) {
      throw refusal(e, namespace);
    }
  }
  return { namespace, registered: missing, present };
}

function refusal(e: unknown, namespace: string): Error {
  const code = grpcCodeOf(e);
  if (code === GRPC_PERMISSION_DENIED || code === GRPC_UNIMPLEMENTED || code === GRPC_UNAUTHENTICATED) return new SearchAttributesMissing(namespace, (e as Error).message);
  return e as Error;
}
