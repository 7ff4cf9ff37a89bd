// Visibility listing that never decodes memos. The SDK's `workflow.list()` decodes every execution's
// memo with the client's data converter, so one run whose memo it cannot read (encrypted with a key
// this client does not hold, or by another team's codec sharing the namespace) makes the whole list
// throw "Unknown encoding". Listings only need ids, status, times and search attributes, which the
// server stores unencoded, so we page the raw visibility API and skip the memo.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { optionalTsToDate } from '@temporalio/common/lib/time.js';
import type { TypedSearchAttributes } from '@temporalio/common';
import { decodeTypedSearchAttributes } from '@temporalio/common/lib/converter/payload-search-attributes.js';
import { asNamespaceMissing, missingNamespace } from './namespace.js';

export interface ListedExecution {
  workflowId: string;
  runId: string;
  type: string;
  /** COMPLETED, RUNNING, FAILED, ... as in the SDK's WorkflowExecutionStatusName. */
  status: string;
  startTime: Date;
  closeTime?: Date;
  typedSearchAttributes: TypedSearchAttributes;
}

// temporal.api.enums.v1.WorkflowExecutionStatus, whose numbering is part of the wire protocol.
const STATUS_NAMES = ['UNSPECIFIED', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED', 'TERMINATED', 'CONTINUED_AS_NEW', 'TIMED_OUT'];

/** Executions matching a visibility query, newest first as the server orders them, without memos. */
export async function* listExecutions(client: Client, query: string): AsyncGenerator<ListedExecution> {
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await listExecutionsPage(client, query, { nextPageToken });
    yield* page.executions;
    nextPageToken = page.nextPageToken;
  } while (nextPageToken);
}

/** One page of executions (the server's page: at most `pageSize`), and the token of the next, if any. */
export async function listExecutionsPage(client: Client, query: string, opts: { pageSize?: number; nextPageToken?: Uint8Array } = {}): Promise<{ executions: ListedExecution[]; nextPageToken?: Uint8Array }> {
  const res = await client.workflowService.listWorkflowExecutions({ namespace: client.options.namespace, query, pageSize: opts.pageSize, nextPageToken: opts.nextPageToken }).catch((e: unknown) => {
    throw asNamespaceMissing(e);
  });
  const executions = (res.executions ?? []).map((raw) => ({
    workflowId: raw.execution?.workflowId ?? '',
    runId: raw.execution?.runId ?? '',
    type: raw.type?.name ?? '',
    status: STATUS_NAMES[raw.status ?? 0] ?? 'UNKNOWN',
    startTime: optionalTsToDate(raw.startTime) ?? new Date(0),
    closeTime: optionalTsToDate(raw.closeTime),
    typedSearchAttributes: decodeTypedSearchAttributes(raw.searchAttributes?.indexedFields),
  }));
  return { executions, nextPageToken: res.nextPageToken?.length ? res.nextPageToken : undefined };
}

/**
 * One execution as describe() gives it, without decoding its memo (which `handle.describe()` does, and
 * throws on for a client without the run's codec key): what `tandem runs show` and `TandemClient.get`
 * need to find a run, so a client without the key can still show the run it cannot decrypt.
 */
export async function describeExecution(client: Client, workflowId: string, runId?: string): Promise<ListedExecution> {
  let raw;
  try {
    raw = (await client.workflowService.describeWorkflowExecution({ namespace: client.options.namespace, execution: { workflowId, runId } })).workflowExecutionInfo;
  } catch (e) {
    // A missing namespace is NOT_FOUND too: said as such, not as a missing run.
    if (missingNamespace(e) !== undefined) throw asNamespaceMissing(e);
    // gRPC NOT_FOUND, as the SDK's describe() reports it.
    if ((e as { code?: number }).code === 5) throw new WorkflowNotFoundError((e as { details?: string }).details ?? 'Workflow not found', workflowId, runId);
    throw e;
  }
  return {
    workflowId: raw?.execution?.workflowId ?? workflowId,
    runId: raw?.execution?.runId ?? '',
    type: raw?.type?.name ?? '',
    status: STATUS_NAMES[raw?.status ?? 0] ?? 'UNKNOWN',
    startTime: optionalTsToDate(raw?.startTime) ?? new Date(0),
    closeTime: optionalTsToDate(raw?.closeTime),
    typedSearchAttributes: decodeTypedSearchAttributes(raw?.searchAttributes?.indexedFields),
  };
}
