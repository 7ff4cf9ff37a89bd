// tuning.siteQueues (contract/tuning.ts): a site → task queue record, checked at the boundary, absent
// from the compiled tuning unless given (so a run without it compiles exactly as before).
import { InputError } from '../../../contract/input-error.js';
import { compileTuning, validateTuning } from '../../../contract/tuning.js';
import { DEFAULTS } from '../../../config/defaults.js';

const worker = { heartbeatThrottleMs: DEFAULTS.heartbeatThrottleMs };
const issues = (t: unknown) => {
  try {
    validateTuning(t, worker);
  } catch (e) {
    if (e instanceof InputError) return e.issues;
    throw e;
  }
  throw new Error(`tuning ${JSON.stringify(t)} was accepted`);
};

test('site queues are accepted and compiled; without them the compiled tuning has no such key', () => {
  expect(validateTuning({ siteQueues: { zurich: 'tandem-zurich', slurm: 'tandem-slurm' } }, worker)).toEqual({ siteQueues: { zurich: 'tandem-zurich', slurm: 'tandem-slurm' } });
  expect(compileTuning({ siteQueues: { zurich: 'tandem-zurich' } }).siteQueues).toEqual({ zurich: 'tandem-zurich' });
  expect('siteQueues' in compileTuning({})).toBe(false);
  expect('siteQueues' in compileTuning({ siteQueues: {} })).toBe(false);
});

test('a bad queue name, an empty site name and the combination with failover are refused naming the field', () => {
  expect(issues({ siteQueues: { zurich: 'has space' } })).toEqual([{ path: 'tuning.siteQueues.zurich', message: 'a task queue name must be non-empty and contain no whitespace' }]);
  expect(issues({ siteQueues: { zurich: '' } })[0]!.path).toBe('tuning.siteQueues.zurich');
  expect(issues({ siteQueues: { '': 'q' } })[0]!.path).toMatch(/^tuning\.siteQueues/);
  expect(issues({ siteQueues: ['q'] })[0]!.path).toBe('tuning.siteQueues');
  expect(issues({ failover: {}, siteQueues: { zurich: 'tandem-zurich' } })).toEqual([{ path: 'tuning.siteQueues', message: expect.stringMatching(/cannot be combined with tuning\.failover/) }]);
});
