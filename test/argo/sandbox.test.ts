// Pod isolation on the local target (activities/argo/sandbox.ts), on the real dev server with real
// bubblewrap sandboxes: every pod has its own /tmp, root and emptyDir volumes, the host is read-only to
// it, and its resources.limits and deadline are enforced.
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ArgoClient, prepare } from '../../argo/client.js';
import type { ArgoStatus } from '../../argo/lang/types.js';
import { startArgoHarness } from './harness.js';

let client: ArgoClient;
let home: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ client, home, stop } = await startArgoHarness('argo-sandbox'));
});
afterAll(() => stop?.());

const run = async (yaml: string): Promise<ArgoStatus> => {
  const p = prepare('inline.yaml', { text: yaml });
  const { id } = await client.submit(p, {});
  return client.wait(id);
};
const node = (st: ArgoStatus, name: string) => {
  const n = Object.values(st.nodes).find((x) => x.displayName === name);
  if (!n) throw new Error(`no node ${name} in ${Object.values(st.nodes).map((x) => x.displayName).join(', ')}`);
  return n;
};

test('two parallel pods writing /tmp/out each read back their own value, and nothing reaches the host /tmp', async () => {
  const token = randomUUID();
  const probe = `/tmp/tandem-sandbox-${token}`;
  const st = await run(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: sandbox-par-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: write, arguments: {parameters: [{name: v, value: "a-${token}"}]}}
      - {name: b, template: write, arguments: {parameters: [{name: v, value: "b-${token}"}]}}
    outputs:
      parameters:
      - {name: a, valueFrom: {parameter: "{{steps.a.outputs.parameters.out}}"}}
      - {name: b, valueFrom: {parameter: "{{steps.b.outputs.parameters.out}}"}}
  - name: write
    inputs: {parameters: [{name: v}]}
    container:
      image: alpine
      command: [sh, -c]
      # Both pods write, wait for each other to have written, then read: on a shared /tmp one would see the other's value.
      args: ["echo {{inputs.parameters.v}} > /tmp/out && mkdir -p ${probe} && echo x > ${probe}/f && sleep 1 && cat /tmp/out"]
    outputs:
      parameters:
      - {name: out, valueFrom: {path: /tmp/out}}
`);
  expect(st.phase).toBe('Succeeded');
  expect(node(st, 'a').outputs?.parameters?.out).toBe(`a-${token}`);
  expect(node(st, 'b').outputs?.parameters?.out).toBe(`b-${token}`);
  expect(node(st, 'a').outputs?.result).toBe(`a-${token}`);
  expect(node(st, 'b').outputs?.result).toBe(`b-${token}`);
  expect(existsSync(probe)).toBe(false);
  if (existsSync('/tmp/out')) expect(readFileSync('/tmp/out', 'utf8')).not.toContain(token);
});

test('an emptyDir is shared by the init and main containers of one pod (mirrorVolumeMounts), and is empty in the next pod', async () => {
  const st = await run(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: sandbox-emptydir-}
spec:
  entrypoint: main
  volumes:
  - {name: shared, emptyDir: {}}
  templates:
  - name: main
    steps:
    - - {name: first, template: with-init}
    - - {name: second, template: look}
  - name: with-init
    initContainers:
    - name: seed
      image: alpine
      command: [sh, -c, "echo seeded-by-init > /data/seed && echo init-tmp > /tmp/init-only"]
      mirrorVolumeMounts: true
    container:
      image: alpine
      # The volume is the pod's; the init container's /tmp is its own filesystem, not the main container's.
      command: [sh, -c, "cat /data/seed && if [ -e /tmp/init-only ]; then echo init-tmp-leaked; fi"]
      volumeMounts:
      - {name: shared, mountPath: /data}
  - name: look
    container:
      image: alpine
      command: [sh, -c, "ls -A /data | wc -l"]
      volumeMounts:
      - {name: shared, mountPath: /data}
`);
  expect(st.phase).toBe('Succeeded');
  expect(node(st, 'first').outputs?.result).toBe('seeded-by-init');
  expect(node(st, 'second').outputs?.result?.trim()).toBe('0');
  // Finished pods release their sandboxes (roots, volumes, init roots): only the collected result stays.
  const pods = join(home, 'argo', 'pods');
  const mine = readdirSync(pods).filter((d) => existsSync(join(pods, d, 'result.json')) && JSON.parse(readFileSync(join(pods, d, 'result.json'), 'utf8')).result === 'seeded-by-init');
  expect(mine).toHaveLength(1);
  expect(readdirSync(join(pods, mine[0]!))).toEqual(['result.json']);
});

test('a pod writing outside its own directories fails, and the host file is untouched', async () => {
  // /usr is the host's, read-only; /etc is rebuilt in the pod's root (its writable layer, as in a container).
  const target = `/usr/lib/tandem-sandbox-${randomUUID()}`;
  const etc = `/etc/tandem-sandbox-${randomUUID()}`;
  const st = await run(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: sandbox-ro-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: own, template: own}
      - {name: host, template: host}
    outputs:
      parameters:
      - {name: own, valueFrom: {parameter: "{{steps.own.outputs.parameters.r}}"}}
  - name: own
    container:
      image: alpine
      # Its root, working directory and declared output paths are its own: writable.
      command: [sh, -c, "echo ok > /result.txt && mkdir -p /scratch && echo s > /scratch/x && echo rel > rel.txt && echo e > ${etc}"]
    outputs:
      parameters:
      - {name: r, valueFrom: {path: /result.txt}}
      - {name: rel, valueFrom: {path: rel.txt}}
  - name: host
    container:
      image: alpine
      command: [sh, -c, "echo x > ${target}"]
`);
  expect(st.phase).toBe('Failed');
  expect(node(st, 'own').phase).toBe('Succeeded');
  expect(node(st, 'own').outputs?.parameters).toEqual({ r: 'ok', rel: 'rel' });
  expect(node(st, 'host').phase).toBe('Failed');
  expect(existsSync(target)).toBe(false);
  expect(existsSync(etc)).toBe(false);
  expect(existsSync('/scratch/x')).toBe(false);
});

test('resources.limits.memory is enforced: the same allocation fails under 64Mi and succeeds under 1Gi', async () => {
  const alloc = (limit: string) => `
  - name: alloc-${limit.toLowerCase()}
    script:
      image: python:alpine
      command: [python3]
      source: |
        x = bytearray(256 * 1024 * 1024)
        print(len(x))
      resources: {limits: {memory: ${limit}}}`;
  const st = await run(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: sandbox-mem-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: small, template: alloc-64mi, continueOn: {failed: true}}
      - {name: big, template: alloc-1gi}
${alloc('64Mi')}
${alloc('1Gi')}
`);
  expect(node(st, 'small').phase).toBe('Failed');
  expect(node(st, 'small').message).toContain('memory limit 64Mi');
  expect(node(st, 'big').phase).toBe('Succeeded');
  expect(node(st, 'big').outputs?.result).toBe(String(256 * 1024 * 1024));
  expect(st.phase).toBe('Succeeded');
});

test('a CPU limit over the deadline bounds CPU time, and activeDeadlineSeconds bounds wall time', async () => {
  const st = await run(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: sandbox-cpu-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: spin, template: spin, continueOn: {failed: true}}
      - {name: sleepy, template: sleepy, continueOn: {failed: true}}
  - name: spin
    # 100m over a 30 s deadline: at most 3 s of CPU time, long before the deadline.
    activeDeadlineSeconds: 30
    container:
      image: alpine
      command: [sh, -c, "while :; do :; done"]
      resources: {limits: {cpu: 100m}}
  - name: sleepy
    activeDeadlineSeconds: 2
    container:
      image: alpine
      command: [sleep, "60"]
`);
  const spin = node(st, 'spin');
  expect(spin.phase).toBe('Failed');
  expect(spin.message).toContain('CPU time limit');
  const sleepy = node(st, 'sleepy');
  expect(sleepy.phase).toBe('Failed');
  expect(sleepy.message).toContain('deadline');
});
