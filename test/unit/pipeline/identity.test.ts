// Names the pipeline derives from its run: they must be stable (backends adopt a job by its name after
// a worker crash) and valid for Slurm, Kubernetes and the file system.
import { fnv1a64, shortHash } from '../../../contract/hash.js';
import { JOB_NAME_MAX, deploymentName, holdIdOf, jobName, lineageJobName } from '../../../workflows/pipeline/identity.js';

const RUN = { workflowId: 'demo-1a2b3c4d', runId: '0f6e2a1c-1111-2222-3333-44445555aaaa' };
// Kubernetes object names that go in label values: RFC 1123 label, at most 63.
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

describe('lineageJobName', () => {
  test('is a readable prefix of the workflow id, a hash of the whole identity, the stage and the attempt', () => {
    const name = lineageJobName(RUN, 'train', 2);
    expect(name).toMatch(/^tandem-demo-1a2b3c4d-[0-9a-z]{13}-train-2$/);
    expect(name).toBe(`tandem-demo-1a2b3c4d-${shortHash(JSON.stringify([RUN.workflowId, RUN.runId, 'train', 2]))}-train-2`);
  });

  test('is the same on every call (replay, activity retry, re-attach after a worker crash)', () => {
    expect(lineageJobName({ ...RUN }, 'train', 1)).toBe(lineageJobName(RUN, 'train', 1));
    // Pinned: a change here renames every in-flight job of every run that has the patch.
    expect(lineageJobName(RUN, 'preprocess', 1)).toBe(`tandem-demo-1a2b3c4d-${shortHash('["demo-1a2b3c4d","0f6e2a1c-1111-2222-3333-44445555aaaa","preprocess",1]')}-preprocess-1`);
  });

  test('differs whenever the identity differs: reset (run id), resume (workflow id), stage, attempt', () => {
    const names = [
      lineageJobName(RUN, 'train', 1),
      lineageJobName({ ...RUN, runId: '0f6e2a1c-1111-2222-3333-44445555aaab' }, 'train', 1),
      lineageJobName({ ...RUN, workflowId: `${RUN.workflowId}-r1f2e` }, 'train', 1),
      lineageJobName(RUN, 'preprocess', 1),
      lineageJobName(RUN, 'train', 2),
    ];
    expect(new Set(names).size).toBe(names.length);
  });

  test('ids that differ only in the tail the cut removes still get different names', () => {
    const pipeline = 'p'.repeat(40); // a 40-character pipeline name: the id's random suffix is past any cut
    const a = lineageJobName({ workflowId: `${pipeline}-0000aaaa`, runId: 'r' }, 'train', 1);
    const b = lineageJobName({ workflowId: `${pipeline}-0000aaab`, runId: 'r' }, 'train', 1);
    expect(a).not.toBe(b);
    expect(a.slice(0, 36)).toBe(b.slice(0, 36)); // same readable prefix
    // and ids that differ only in what the slug folds together (case, punctuation)
    expect(lineageJobName({ workflowId: 'My_Run', runId: 'r' }, 'train', 1)).not.toBe(lineageJobName({ workflowId: 'my-run', runId: 'r' }, 'train', 1));
  });

  test('fits every backend for any id: at most 63 characters, a DNS label, no separator at either end', () => {
    const ids = ['x'.repeat(300), '--Run--', 'ÜNÏCÖDE/名前', '', '-', 'a'.repeat(27) + '-' + 'b'.repeat(10), 'Demo_Run 1'];
    for (const workflowId of ids) {
      for (const stage of ['preprocess', 'train'] as const) {
        for (const attempt of [1, 9, 50]) {
          const name = lineageJobName({ workflowId, runId: '0f6e2a1c-1111-2222-3333-44445555aaaa' }, stage, attempt);
          expect(name.length).toBeLessThanOrEqual(JOB_NAME_MAX);
          expect(name).toMatch(DNS_LABEL);
          expect(name).not.toMatch(/--[0-9a-z]{13}-/); // the slug never leaves a dangling separator
        }
      }
    }
    expect(lineageJobName({ workflowId: '', runId: 'r' }, 'train', 1)).toMatch(/^tandem-[0-9a-z]{13}-train-1$/);
    expect(lineageJobName({ workflowId: 'x'.repeat(300), runId: 'r' }, 'preprocess', 50)).toHaveLength(63);
  });
});

describe('the hash', () => {
  test('is FNV-1a 64 over UTF-8 (published test vectors)', () => {
    expect(fnv1a64('').toString(16)).toBe('cbf29ce484222325');
    expect(fnv1a64('a').toString(16)).toBe('af63dc4c8601ec8c');
    expect(fnv1a64('foobar').toString(16)).toBe('85944171f73967e8');
    // non-ASCII goes in as its UTF-8 bytes, as Node's Buffer would give them
    expect(fnv1a64('é名😀')).toBe(fnv1aBytes(Buffer.from('é名😀', 'utf8')));
  });

  test('short form: fixed width base 36', () => {
    expect(shortHash('')).toHaveLength(13);
    expect(shortHash('', 8)).toBe(shortHash('').slice(-8));
    expect(shortHash('a')).toMatch(/^[0-9a-z]{13}$/);
  });
});

/** Reference FNV-1a 64 over raw bytes, to check the UTF-8 encoding by hand. */
function fnv1aBytes(bytes: Uint8Array): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return h;
}

describe('jobName (runs started before the job-identity patch)', () => {
  test('is the run, stage and attempt, in a name every backend accepts', () => {
    expect(jobName('demo-run', 'train', 2)).toBe('tandem-demo-run-train-2');
    expect(jobName('My_Run/42', 'preprocess', 1)).toBe('tandem-my-run-42-preprocess-1');
  });

  test('drops leading and trailing separators and keeps 40 characters of the id', () => {
    expect(jobName('--Run--', 'train', 1)).toBe('tandem-run-train-1');
    const name = jobName('x'.repeat(100), 'train', 3);
    expect(name).toBe(`tandem-${'x'.repeat(40)}-train-3`);
    expect(name).toMatch(/^[a-z0-9-]+$/);
  });

  test('is the same on every call (replay, resubmission)', () => {
    expect(jobName('Run 7', 'train', 1)).toBe(jobName('Run 7', 'train', 1));
  });
});

describe('deploymentName', () => {
  test('joins pipeline and run in a Kubernetes object name', () => {
    expect(deploymentName('demo', 'Run_1')).toBe('demo-run-1');
  });

  test('is at most 60 characters and never ends with a dash', () => {
    const name = deploymentName('demo', `${'a'.repeat(54)}/bcdef`);
    expect(name.length).toBeLessThanOrEqual(60);
    expect(name).toBe(`demo-${'a'.repeat(54)}`);
    expect(deploymentName('demo', 'x'.repeat(54) + '!!!!')).not.toMatch(/-$/);
  });

  test('with the job-identity patch, a name that must be cut ends in a hash: runs of a 40-character pipeline differ', () => {
    const pipeline = 'p'.repeat(40);
    const [a, b] = [`${pipeline}-0000aaaa`, `${pipeline}-0000aaab`].map((id) => deploymentName(pipeline, id, true));
    expect(a).not.toBe(b);
    expect(a).toHaveLength(60);
    expect(a).toMatch(/^p{40}-p{5}-[0-9a-z]{13}$/);
    expect(deploymentName(pipeline, `${pipeline}-0000aaaa`, true)).toBe(a);
    // Names that fit are unchanged, and runs without the patch keep the plain cut.
    expect(deploymentName('demo', 'Run_1', true)).toBe('demo-run-1');
    expect(deploymentName(pipeline, `${pipeline}-0000aaaa`)).toBe(deploymentName(pipeline, `${pipeline}-0000aaab`));
  });
});

test('a quota hold is named for the run and stage, not the site or attempt', () => {
  expect(holdIdOf('run-1', 'train')).toBe('run-1/train');
  expect(holdIdOf('run-1', 'preprocess')).toBe('run-1/preprocess');
});
