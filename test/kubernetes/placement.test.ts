// [no cluster] Kubernetes quantity parsing for placement's inventory. The inventory itself (allocatable
// resources, pool and topology labels, readiness, cordons) is read from a real kube-apiserver in
// placement.cp.test.ts.
import { cpuQuantity, memoryMiB } from '../../activities/placement-sources.js';

test('quantities', () => {
  expect(cpuQuantity('3500m')).toBe(3.5);
  expect(cpuQuantity('4')).toBe(4);
  expect(memoryMiB('16Gi')).toBe(16384);
  expect(memoryMiB('1048576Ki')).toBe(1024);
  expect(memoryMiB('1G')).toBe(953);
});
