// synchronization across workflows on the real Temporal dev server: mutexes (workflow- and
// template-level) never let two holders
// overlap, a ConfigMap semaphore admits exactly its limit at once, a run stopped while waiting
// leaves the lock's queue, and Argo's own synchronization examples run to Succeeded.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ArgoClient, prepare } from '../../argo/client.js';
import type { LockState } from '../../workflows/argo/lock.js';
import { syncLocks } from '../../workflows/argo/sync.js';
import { whyNotRunnable } from '../../argo/lint/runnable.js';
import { tempDir, waitFor } from '../helpers.js';
import { startArgoHarness } from './harness.js';

const EXAMPLES = '/work/shared/data/argo-examples';
let client: ArgoClient;
let home: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ client, home, stop } = await startArgoHarness('argo-sync'));
});
afterAll(() => stop?.());

const submit = async (yaml: string) => (await client.submit(prepare('sync.yaml', { text: yaml }))).id;
const ns = () => `t${randomBytes(3).toString('hex')}`;

/** A step that logs `<ns-time> start|end <label>` around a sleep: the holder's real critical section. */
const critical = (log: string, seconds: number, label = '{{workflow.name}}-{{pod.name}}') =>
  // Pods have their own filesystems: the log's directory is a hostPath volume of the template (the line after `container:`).
  `{image: alpine, command: [sh, -c], args: ['echo "$(date +%s%N) start ${label}" >> ${log}; sleep ${seconds}; echo "$(date +%s%N) end ${label}" >> ${log}'], volumeMounts: [{name: log, mountPath: "${dirname(log)}"}]}\n    volumes: [{name: log, hostPath: {path: "${dirname(log)}"}}]`;

function intervals(log: string): { label: string; start: number; end: number }[] {
  const by = new Map<string, { label: string; start: number; end: number }>();
  for (const line of readFileSync(log, 'utf8').trim().split('\n')) {
    const [t, what, label] = line.split(' ') as [string, 'start' | 'end', string];
    const e = by.get(label) ?? { label, start: NaN, end: NaN };
    e[what] = Number(BigInt(t) / 1_000_000n);
    by.set(label, e);
  }
  return [...by.values()];
}

/** The most holders inside their critical sections at one instant. */
function maxConcurrent(iv: { start: number; end: number }[]): number {
  const ev = iv.flatMap((i) => [[i.start, 1] as const, [i.end, -1] as const]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let cur = 0;
  let max = 0;
  for (const [, d] of ev) max = Math.max(max, (cur += d));
  return max;
}

test('one mutex, taken at workflow level by one run and at template level by two others: the holders never overlap', async () => {
  const space = ns();
  const log = join(tempDir('sync-mutex'), 'log');
  const wfLevel = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: wf-level-, namespace: ${space}}
spec:
  entrypoint: main
  synchronization: {mutexes: [{name: shared}]}
  templates:
  - name: main
    container: ${critical(log, 0.6)}
`;
  const tmplLevel = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: tmpl-level-, namespace: ${space}}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: hold, template: hold}
  - name: hold
    synchronization: {mutexes: [{name: shared}]}
    container: ${critical(log, 0.6)}
`;
  const ids = await Promise.all([submit(wfLevel), submit(tmplLevel), submit(tmplLevel)]);
  // While one holds the mutex, someone waits for it, Pending with Argo's message.
  const waiting = await waitFor('a run waiting for the mutex', async () => {
    for (const id of ids) {
      const st = await client.status(id).catch(() => undefined);
      if (st?.phase === 'Pending' && /Waiting for t[0-9a-f]+\/Mutex\/shared lock/.test(st.message ?? '')) return st.message;
      const n = Object.values(st?.nodes ?? {}).find((x) => x.phase === 'Pending');
      if (n) return n.message;
    }
    return undefined;
  });
  expect(waiting).toMatch(new RegExp(`Waiting for ${space}/Mutex/shared lock`));
  const done = await Promise.all(ids.map((id) => client.wait(id)));
  expect(done.map((s) => s.phase)).toEqual(['Succeeded', 'Succeeded', 'Succeeded']);
  const iv = intervals(log);
  expect(iv).toHaveLength(3);
  expect(maxConcurrent(iv)).toBe(1);
  // The lock workflow completed once nobody held or waited.
  const lock = client.client.workflow.getHandle(`argo-sync-${space}-mutex-shared`);
  await waitFor('the idle lock to complete', async () => ((await lock.describe()).status.name === 'COMPLETED' ? true : undefined));
});

test('a ConfigMap semaphore admits exactly its limit at once; a missing ConfigMap is an Error', async () => {
  const space = ns();
  mkdirSync(join(home, 'argo', 'configmaps', `cfg-${space}`), { recursive: true });
  writeFileSync(join(home, 'argo', 'configmaps', `cfg-${space}`, 'limit'), '2\n');
  const log = join(tempDir('sync-sem'), 'log');
  const id = await submit(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: sem-, namespace: ${space}}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: hold, template: hold, withItems: [a, b, c, d, e]}
  - name: hold
    synchronization: {semaphores: [{configMapKeyRef: {name: cfg-${space}, key: limit}}]}
    container: ${critical(log, 0.7)}
`);
  const st = await client.wait(id);
  expect(st.phase).toBe('Succeeded');
  const iv = intervals(log);
  expect(iv).toHaveLength(5);
  expect(maxConcurrent(iv)).toBe(2);

  const missing = await client.wait(
    await submit(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: sem-missing-, namespace: ${space}}
spec:
  entrypoint: main
  templates:
  - name: main
    synchronization: {semaphores: [{configMapKeyRef: {name: nowhere, key: limit}}]}
    container: {image: alpine, command: [sh, -c, "echo never"]}
`),
  );
  expect(missing.phase).toBe('Error');
  expect(missing.message).toMatch(/ConfigMap t[0-9a-f]+\/nowhere key limit does not exist/);
});

test('a run stopped while waiting leaves the queue; the next one still gets the mutex', async () => {
  const space = ns();
  const log = join(tempDir('sync-stop'), 'log');
  const wf = (seconds: number) => `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: stop-, namespace: ${space}}
spec:
  entrypoint: main
  synchronization: {mutexes: [{name: m}]}
  templates:
  - name: main
    container: ${critical(log, seconds)}
`;
  const holder = await submit(wf(1.5));
  const lock = client.client.workflow.getHandle(`argo-sync-${space}-mutex-m`);
  await waitFor('the holder to hold', async () => ((await lock.query<LockState>('argo.sync.state').catch(() => undefined))?.holders.length === 1 ? true : undefined));
  const waiter = await submit(wf(0.1));
  await waitFor('the waiter to queue', async () => ((await lock.query<LockState>('argo.sync.state')).queue.length === 1 ? true : undefined));
  await client.stop(waiter, 'no longer needed');
  const stopped = await client.wait(waiter);
  expect(stopped.phase).toBe('Failed');
  expect((await lock.query<LockState>('argo.sync.state')).queue).toEqual([]);
  const third = await submit(wf(0.1));
  expect((await client.wait(holder)).phase).toBe('Succeeded');
  expect((await client.wait(third)).phase).toBe('Succeeded');
  const iv = intervals(log);
  expect(iv.map((i) => i.label.split('-')[0])).toEqual(['stop', 'stop']); // the stopped waiter never ran
  expect(maxConcurrent(iv)).toBe(1);
});

test("Argo's synchronization examples run to Succeeded, the template-level mutexes serialising their loops", async () => {
  // synchronization-mutex-tmpl-level.yaml with its sleeps shortened (20 s → 0.3 s, 50 s → 0.5 s).
  const text = readFileSync(join(EXAMPLES, 'synchronization-mutex-tmpl-level.yaml'), 'utf8').replace('sleep 20;', 'sleep 0.3;').replace('sleep 50;', 'sleep 0.5;');
  expect(text).toContain('sleep 0.3;');
  expect(text).toContain('sleep 0.5;');
  const tmpl = (await client.submit(prepare('synchronization-mutex-tmpl-level.yaml', { text }))).id;
  const wfLevel = (await client.submit(prepare(join(EXAMPLES, 'synchronization-mutex-wf-level.yaml')))).id;
  mkdirSync(join(home, 'argo', 'configmaps', 'my-config'), { recursive: true });
  writeFileSync(join(home, 'argo', 'configmaps', 'my-config', 'template'), '3');
  const semText = readFileSync(join(EXAMPLES, 'synchronization-tmpl-level.yaml'), 'utf8').replace('sleep 10;', 'sleep 0.3;');
  const sem = (await client.submit(prepare('synchronization-tmpl-level.yaml', { text: semText }))).id;

  const st = await client.wait(tmpl);
  expect(st.phase).toBe('Succeeded');
  const pods = Object.values(st.nodes).filter((n) => n.type === 'Pod');
  expect(pods).toHaveLength(10);
  // Five 0.5 s holders of mutex "test" one after another take at least 2.5 s.
  const slow = pods.filter((n) => n.templateName === 'acquire-lock-1');
  const span = Math.max(...slow.map((n) => Date.parse(n.finishedAt!))) - Math.min(...slow.map((n) => Date.parse(n.startedAt!)));
  expect(span).toBeGreaterThanOrEqual(2500);
  expect((await client.wait(wfLevel)).phase).toBe('Succeeded');
  expect((await client.wait(sem)).phase).toBe('Succeeded');
});

test('lock references: both syntaxes, namespaces, sorted; database semaphores are refused', () => {
  expect(syncLocks({ mutexes: [{ name: 'b' }, { name: 'a', namespace: 'other' }], semaphore: { configMapKeyRef: { name: 'cm', key: 'k' } } }, 'ns').map((l) => l.label)).toEqual([
    'ns/Mutex/b',
    'ns/ConfigMap/cm/k',
    'other/Mutex/a',
  ]);
  expect(() => syncLocks({ semaphores: [{ database: { key: 'workflow' } }] }, 'ns')).toThrow(/database semaphores/);
  // Conformance: a semaphore needs its ConfigMap, which a bare local host does not have; a mutex needs nothing.
  const spec = (f: string) => prepare(join(EXAMPLES, f)).doc.spec as Record<string, unknown>;
  expect(whyNotRunnable(spec('synchronization-tmpl-level.yaml'))).toMatch(/templates\.acquire-lock: its semaphore limit comes from the Kubernetes ConfigMap my-config \(key template\)/);
  expect(whyNotRunnable(spec('synchronization-mutex-wf-level.yaml'))).toBeUndefined();
});
