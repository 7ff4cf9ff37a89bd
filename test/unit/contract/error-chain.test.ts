// The error-and-causes reader the SDK, the CLI and the executor plugin share.
import { errorChain, grpcCodeOf } from '../../../contract/error-chain.js';

test('outermost first, bounded, with the first gRPC code found', () => {
  const inner = Object.assign(new Error('3 INVALID_ARGUMENT: no mapping'), { code: 3 });
  const outer = new Error('Failed to start Workflow', { cause: new Error('wrapped', { cause: inner }) });
  expect(errorChain(outer).map((l) => l.message)).toEqual(['Failed to start Workflow', 'wrapped', '3 INVALID_ARGUMENT: no mapping']);
  expect(errorChain(outer)[2]!.error).toBe(inner);
  expect(grpcCodeOf(outer)).toBe(3);
  expect(grpcCodeOf(new Error('plain'))).toBeUndefined();
  const loop: Error & { cause?: unknown } = new Error('self');
  loop.cause = loop;
  expect(errorChain(loop)).toHaveLength(5);
  expect(errorChain(undefined)).toEqual([]);
  expect(errorChain('a string')).toEqual([]);
});
