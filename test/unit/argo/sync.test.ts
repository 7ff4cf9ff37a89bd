// Lock naming of Argo synchronization (workflows/argo/sync.ts), without a server.
import { grantKey, holderKey, lockWaitMessage, syncLocks } from '../../../workflows/argo/sync.js';

test('mutexes and semaphores, old and new syntax, sorted by id and deduplicated', () => {
  const locks = syncLocks({ mutex: { name: 'm' }, mutexes: [{ name: 'b' }, { name: 'm' }, { name: 'a', namespace: 'other' }], semaphores: [{ configMapKeyRef: { name: 'cm', key: 'k' } }] }, 'ns');
  expect(locks.map((l) => l.id)).toEqual(['argo-sync-ns-mutex-b', 'argo-sync-ns-mutex-m', 'argo-sync-ns-semaphore-cm/k', 'argo-sync-other-mutex-a']);
  expect(locks.find((l) => l.kind === 'semaphore')).toEqual({ id: 'argo-sync-ns-semaphore-cm/k', label: 'ns/ConfigMap/cm/k', kind: 'semaphore', namespace: 'ns', configMap: 'cm', key: 'k' });
  expect(locks.find((l) => l.namespace === 'other')?.label).toBe('other/Mutex/a');
  expect(syncLocks(undefined, 'ns')).toEqual([]);
  expect(syncLocks({ semaphore: { configMapKeyRef: { name: 'c', key: 'k' }, namespace: 'x' } }, 'ns')[0]!.id).toBe('argo-sync-x-semaphore-c/k');
});

test('malformed synchronization blocks are spec errors', () => {
  expect(() => syncLocks({ mutex: {} }, 'ns')).toThrow(/a mutex needs a name/);
  expect(() => syncLocks({ semaphores: [{ database: { key: 'k' } }] }, 'ns')).toThrow(/database semaphores/);
  expect(() => syncLocks({ semaphore: {} }, 'ns')).toThrow(/needs a configMapKeyRef/);
  expect(() => syncLocks({ semaphore: { configMapKeyRef: { name: 'c' } } }, 'ns')).toThrow(/needs name and key/);
});

test('holder and grant keys', () => {
  const run = { workflowId: 'wf', runId: 'r1' };
  expect(holderKey(run)).toBe('wf/r1');
  expect(holderKey(run, 'wf-3')).toBe('wf/r1/wf-3');
  expect(grantKey('argo-sync-ns-mutex-m', 'wf/r1')).toBe('argo-sync-ns-mutex-m|wf/r1');
  expect(lockWaitMessage({ id: 'i', label: 'ns/Mutex/m', kind: 'mutex', namespace: 'ns' }, 1)).toBe('Waiting for ns/Mutex/m lock. Lock limit: 1');
});
