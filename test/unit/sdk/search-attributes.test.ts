// Where the server refuses to add search attributes (Temporal Cloud; an authorizer without admin
// rights), setup says what to register and where, instead of a bare PERMISSION_DENIED.
import type { Client } from '@temporalio/client';
import { registerSearchAttributes, SearchAttributesMissing, isMissingSearchAttribute } from '../../../sdk/search-attributes.js';

const grpcError = (code: number, message: string) => Object.assign(new Error(message), { code });
const clientWith = (operatorService: object) => ({ connection: { operatorService } }) as unknown as Client;

test('a refused add names the attributes and the way to register them', async () => {
  const client = clientWith({ listSearchAttributes: async () => ({ customAttributes: { TandemTenant: 2 } }), addSearchAttributes: async () => Promise.reject(grpcError(7, '7 PERMISSION_DENIED: Request unauthorized.')) });
  const e = await registerSearchAttributes(client, 'ml-prod').catch((x: unknown) => x);
  expect(e).toBeInstanceOf(SearchAttributesMissing);
  expect((e as Error).message).toMatch(/namespace ml-prod lacks Tandem's search attributes .*TandemPipeline:Keyword.*PERMISSION_DENIED.*tandem setup.*tcld namespace search-attributes add/);
});

test('a refused list (Cloud has no operator service for API keys) is the same clear error; other errors pass through', async () => {
  await expect(registerSearchAttributes(clientWith({ listSearchAttributes: async () => Promise.reject(grpcError(12, '12 UNIMPLEMENTED')) }), 'ns')).rejects.toBeInstanceOf(SearchAttributesMissing);
  await expect(registerSearchAttributes(clientWith({ listSearchAttributes: async () => Promise.reject(grpcError(14, '14 UNAVAILABLE')) }), 'ns')).rejects.toThrow('14 UNAVAILABLE');
});

test('only an INVALID_ARGUMENT about one of Tandem\'s attributes counts as missing', () => {
  const wrapped = Object.assign(new Error('Failed to start Workflow'), { cause: grpcError(3, '3 INVALID_ARGUMENT: Namespace x has no mapping defined for search attribute TandemTenant') });
  expect(isMissingSearchAttribute(wrapped)).toBe(true);
  expect(isMissingSearchAttribute(Object.assign(new Error('x'), { cause: grpcError(3, '3 INVALID_ARGUMENT: workflow id too long') }))).toBe(false);
  expect(isMissingSearchAttribute(Object.assign(new Error('x'), { cause: grpcError(3, 'no mapping defined for search attribute CustomThing') }))).toBe(false);
});
