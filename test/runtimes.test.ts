// Which backend runs a stage: an explicit runtime, placement's chosen site for `auto`, or the default.
import { resolveBackend } from '../activities/runtimes.js';
import { LocalJobBackend } from '../backends/local-jobs.js';
import type { JobBackend } from '../backends/types.js';
import { tempDir } from './helpers.js';

const slurm = { runtime: 'slurm', site: 'zurich', findByName: async () => undefined, submit: async () => { throw new Error('unused'); }, status: async () => { throw new Error('unused'); }, cancel: async () => undefined } as JobBackend & { site: string };

test('auto follows the site placement chose, else prefers Slurm, then Kubernetes, then local', () => {
  const local = new LocalJobBackend(tempDir('rt'));
  const backends = { local, slurm };
  expect(resolveBackend(backends, 'auto', 'train')).toBe(slurm);
  expect(resolveBackend(backends, 'auto', 'train', 'local')).toBe(local);
  expect(resolveBackend(backends, 'auto', 'train', 'zurich')).toBe(slurm);
  expect(resolveBackend(backends, 'auto', 'train', 'elsewhere')).toBe(slurm);
  expect(resolveBackend(backends, 'local', 'train', 'zurich')).toBe(local); // an explicit runtime wins
  expect(() => resolveBackend({ local }, 'kubernetes', 'deploy')).toThrow(/stage deploy asks for runtime "kubernetes", but this worker has no such backend configured \(configured: local\)/);
});
