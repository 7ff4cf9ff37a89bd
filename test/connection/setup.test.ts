// Search attributes are a once-per-namespace setup (`tandem setup`), not part of every launch: on a
// fresh namespace of the real dev server, setup registers them and reports what it did; a launch
// into a namespace that lacks them registers them once (the server permits it here) and starts.
import { randomBytes } from 'node:crypto';
import Long from 'long';
import { Client, Connection } from '@temporalio/client';
import { TandemClient } from '../../sdk/client.js';
import { TANDEM_SEARCH_ATTRIBUTES } from '../../contract/search-attributes.js';
import { isMissingSearchAttribute } from '../../sdk/search-attributes.js';
import { SA_TENANT } from '../../contract/search-attributes.js';
import { address, spec, waitFor } from '../helpers.js';

let connection: Connection;
const names = TANDEM_SEARCH_ATTRIBUTES.map((a) => a.name);

async function freshNamespace(): Promise<string> {
  const namespace = `setup-${randomBytes(3).toString('hex')}`;
  await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: { seconds: Long.fromNumber(86_400) } });
  await waitFor('the namespace', async () => (await connection.workflowService.describeNamespace({ namespace }).then(() => true, () => undefined)), 30_000, 200);
  return namespace;
}

beforeAll(async () => {
  connection = await Connection.connect({ address: address() });
});
afterAll(() => connection?.close());

test('setup registers the missing attributes once, then finds them present', async () => {
  const namespace = await freshNamespace();
  const tandem = await TandemClient.connect({ address: address(), namespace });
  try {
    expect(await tandem.setup()).toEqual({ namespace, registered: names, present: [] });
    expect(await tandem.setup()).toEqual({ namespace, registered: [], present: names });
  } finally {
    await tandem.close();
  }
}, 60_000);

test("the server's refusal of an unregistered attribute is recognised, and launch registers them once", async () => {
  const namespace = await freshNamespace();
  const client = new Client({ connection, namespace });
  // What the real server says when a start sets an attribute the namespace lacks.
  const refused = await client.workflow
    .start('hybridPipeline', { taskQueue: 'nobody', workflowId: 'probe', args: [], typedSearchAttributes: [{ key: SA_TENANT, value: 'acme' }] })
    .then(() => undefined, (e: unknown) => e);
  expect(isMissingSearchAttribute(refused)).toBe(true);
  const tandem = await TandemClient.connect({ address: address(), namespace, taskQueue: 'nobody-polls' });
  try {
    const h = await tandem.launch(spec(), { id: 'after-setup' });
    expect((await h.workflow.describe()).typedSearchAttributes.get(SA_TENANT)).toBe('default');
    await h.workflow.terminate('test done');
    // Registered once: a second launch does not need to.
    expect((await tandem.setup()).registered).toEqual([]);
  } finally {
    await tandem.close();
  }
}, 60_000);
