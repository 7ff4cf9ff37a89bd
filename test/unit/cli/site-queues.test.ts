import { InvalidArgumentError } from 'commander';
import { collectSiteQueue } from '../../../cli/site-queues.js';

test('--site-queue collects site=queue pairs into tuning.siteQueues', () => {
  const once = collectSiteQueue('zurich=tandem-zurich');
  expect(collectSiteQueue('slurm=tandem-lugano', once)).toEqual({ zurich: 'tandem-zurich', slurm: 'tandem-lugano' });
  expect(collectSiteQueue('zurich=tandem-zurich', once)).toEqual(once); // the same pair twice is harmless
});

test.each(['zurich', 'zurich=', '=q', 'zu rich=q', 'zurich=a b'])('--site-queue %j is refused with the expected shape', (v) => {
  expect(() => collectSiteQueue(v)).toThrow(InvalidArgumentError);
  expect(() => collectSiteQueue(v)).toThrow(/must look like <site>=<task queue>/);
});

test('one site with two queues is refused, naming both', () => {
  expect(() => collectSiteQueue('zurich=b', { zurich: 'a' })).toThrow('--site-queue names site zurich twice (a, b)');
});

test('a prototype key is an ordinary site name, not a way around the duplicate check', () => {
  expect(collectSiteQueue('constructor=q')).toEqual({ constructor: 'q' });
  expect(Object.getPrototypeOf(collectSiteQueue('__proto__=q'))).toBe(Object.prototype);
});
