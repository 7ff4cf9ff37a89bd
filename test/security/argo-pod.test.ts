// A hostile Argo pod, end to end: a workflow submitted through the ArgoClient, run by the interpreter on
// a real dev server with the local target and real bubblewrap. Its pod tries to read another workflow's
// secret, TANDEM_HOME and the worker's /proc, to write into the home and /usr, to reach the Temporal
// frontend and another port on the host's 127.0.0.1, and to have the
// worker read a secret for it through an output parameter that is a symlink — each attempt fails, while
// its own secret (envFrom) reaches it. The home sits inside the checkout, as the default .tandem does,
// not under /tmp (the pod's own /tmp would hide a leak there). And a template that calls itself ends at
// Argo's recursion depth instead of overflowing the workflow thread's stack and killing the worker.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepare, type ArgoClient } from '../../argo/client.js';
import type { ArgoStatus } from '../../argo/lang/types.js';
import { MAX_DEPTH_MESSAGE, MAX_TEMPLATE_DEPTH } from '../../workflows/argo/template.js';
import { startArgoHarness } from '../argo/harness.js';
import { address } from '../helpers.js';
import { probePort } from './probe-port.js';

const home = mkdtempSync(join(process.cwd(), '.argo-hostile-'));
let client: ArgoClient;
let stop: () => Promise<void>;
let hostPort: Awaited<ReturnType<typeof probePort>>;

beforeAll(async () => {
  for (const [name, value] of [['other', 'hunter2'], ['mine', 'my-own']]) {
    mkdirSync(join(home, 'argo', 'secrets', name), { recursive: true, mode: 0o700 });
    writeFileSync(join(home, 'argo', 'secrets', name, 'password'), value, { mode: 0o600 });
  }
  ({ client, stop } = await startArgoHarness('argo-hostile', { home }));
  hostPort = await probePort();
});
afterAll(async () => {
  await stop?.();
  hostPort?.server.close();
  rmSync(home, { recursive: true, force: true });
});

const node = (st: ArgoStatus, name: string) => Object.values(st.nodes).find((x) => x.displayName === name)!;

test('a hostile pod reads no other secret, home or worker /proc, reaches no host port, and cannot have a secret read for it', async () => {
  const tries: Record<string, string> = {
    otherSecret: `cat ${home}/argo/secrets/other/password`,
    home: `ls ${home}/argo`,
    workerProc: `cat /proc/${process.pid}/environ`,
    hostPort: `exec 3<>/dev/tcp/127.0.0.1/${hostPort.port}`,
    // The Temporal frontend the worker talks to (the dev server's has no auth).
    temporal: `exec 3<>/dev/tcp/127.0.0.1/${new URL(`http://${address()}`).port}`,
    writeHome: `echo x > ${home}/planted && test -f ${home}/planted`,
    writeUsr: 'echo x > /usr/planted',
  };
  const probe = Object.entries(tries).map(([k, c]) => `if (${c}) >/dev/null 2>&1; then echo ESCAPED-${k}; else echo blocked-${k}; fi`).join('; ');
  const yaml = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: hostile-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: probe, template: probe}
      - {name: smuggle, template: smuggle, continueOn: {failed: true}}
  - name: probe
    container:
      image: bash
      command: [bash, -c, ${JSON.stringify(`(${probe}; echo "own=$OWN") | tr '\\n' ' ' > /tmp/result`)}]
      env:
      - name: OWN
        valueFrom: {secretKeyRef: {name: mine, key: password}}
    outputs:
      parameters:
      - {name: result, valueFrom: {path: /tmp/result}}
  - name: smuggle
    container:
      image: alpine
      command: [sh, -c, "ln -s ${home}/argo/secrets/other/password /tmp/out"]
    outputs:
      parameters:
      - {name: out, valueFrom: {path: /tmp/out}}
`;
  const { id } = await client.submit(prepare('hostile.yaml', { text: yaml }), {});
  const st = await client.wait(id);
  expect(node(st, 'probe').phase).toBe('Succeeded');
  expect(node(st, 'probe').outputs?.parameters?.result?.trim()).toBe(`${Object.keys(tries).map((k) => `blocked-${k}`).join(' ')} own=my-own`);
  const smuggle = node(st, 'smuggle');
  // As Argo's executor failing to save an output: the node errs, naming the parameter; nothing of the secret.
  expect([smuggle.phase, smuggle.message]).toEqual(['Error', "output parameter out: /tmp/out leads outside the pod's own files"]);
  expect(JSON.stringify(st)).not.toContain('hunter2');
  expect(existsSync(join(home, 'planted'))).toBe(false); // at most in the pod's own (empty) view of the path
});

test('a template that calls itself stops at Argo\'s recursion depth as an Error node, and the worker goes on', async () => {
  const yaml = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: recurse-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: again, template: main}
`;
  const { id } = await client.submit(prepare('recurse.yaml', { text: yaml }), {});
  const st = await client.wait(id);
  expect(st.phase).toBe('Failed');
  const nodes = Object.values(st.nodes);
  const deepest = nodes.filter((n) => n.phase === 'Error');
  expect(deepest.map((n) => [n.type, n.message])).toEqual([['Skipped', MAX_DEPTH_MESSAGE]]);
  // The root, 98 nested calls of main and their step groups, then the node that was not run.
  expect(nodes.filter((n) => n.type === 'Steps')).toHaveLength(MAX_TEMPLATE_DEPTH - 1);
  // The same worker runs the next workflow (it used to die of a stack overflow here).
  const next = await client.submit(prepare('next.yaml', { text: yaml.replace('recurse-', 'after-').replace('template: main}', 'template: leaf}').concat('  - name: leaf\n    container: {image: alpine, command: ["true"]}\n') }), {});
  expect((await client.wait(next.id)).phase).toBe('Succeeded');
});
