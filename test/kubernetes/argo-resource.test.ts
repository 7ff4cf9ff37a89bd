// [no cluster] Argo resource templates' success/failure conditions and kubectl jsonpath, as Argo
// evaluates them. The templates themselves (create/apply/patch/get/delete, conditions on Jobs, 422s,
// Argo's k8s-jobs example) run against a real kube-apiserver in argo-resource.cp.test.ts.
import { conditionHolds, kubectlJsonPath } from '../../activities/argo/resource.js';

test('conditions and kubectl jsonpath, as Argo evaluates them', () => {
  const o = { status: { succeeded: 3, phase: 'Running' }, metadata: { labels: { tier: 'web' } } };
  expect(conditionHolds(o, 'status.succeeded > 2')).toBe(true);
  expect(conditionHolds(o, 'status.succeeded > 2,status.phase == Succeeded')).toBe(false);
  expect(conditionHolds(o, 'metadata.labels.tier in (db, web),!status.failed')).toBe(true);
  expect(conditionHolds(o, 'status.failed > 1')).toBe(false);
  expect(kubectlJsonPath(o, '{.metadata.labels.tier}')).toBe('web');
});
