// kubectl's rollout-status rule, and the one place Tandem departs from it: waiting for a rollback
// from a timed-out revision, where the controller keeps the old ProgressDeadlineExceeded condition
// until the restored revision is complete (seen on the real control plane).
import type { V1Deployment } from '@kubernetes/client-node';
import { rolloutState } from '../../../backends/kubernetes/serving.js';

const at = (iso: string) => new Date(iso);
const deployment = (status: NonNullable<V1Deployment['status']>, generation = 3): V1Deployment => ({ metadata: { generation }, spec: { replicas: 1, selector: {}, template: {} }, status: { observedGeneration: generation, ...status } });
const timedOut = (when: string) => ({ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'ReplicaSet "chat-1" has timed out progressing.', lastUpdateTime: at(when) });

test('done, waiting, failed as kubectl rollout status says', () => {
  expect(rolloutState(deployment({ replicas: 1, updatedReplicas: 1, availableReplicas: 1 }), 3)).toEqual({ done: true });
  expect(rolloutState(deployment({ replicas: 2, updatedReplicas: 1, availableReplicas: 1 }), 3)).toEqual({ waiting: '1 old replicas pending termination' });
  expect(rolloutState(deployment({ replicas: 2, updatedReplicas: 1, conditions: [timedOut('2026-12-01T10:00:00Z')] }), 3)).toMatchObject({ failed: expect.stringMatching(/progress deadline/) });
});

test("a rollback's wait ignores the timed-out verdict of the revision it undoes, not a later one", () => {
  const d = deployment({ replicas: 2, updatedReplicas: 1, availableReplicas: 1, conditions: [timedOut('2026-12-01T10:00:00Z')] });
  // The rollback was applied 400 ms after the verdict (the verdict's time has whole seconds).
  expect(rolloutState(d, 3, new Date('2026-12-01T10:00:00.400Z'))).toEqual({ waiting: '1 old replicas pending termination' });
  // A verdict set a progress deadline after the rollback is the restored revision's own.
  const later = deployment({ replicas: 2, updatedReplicas: 1, conditions: [timedOut('2026-12-01T10:00:11Z')] });
  expect(rolloutState(later, 3, new Date('2026-12-01T10:00:00.400Z'))).toMatchObject({ failed: expect.stringMatching(/progress deadline/) });
});
