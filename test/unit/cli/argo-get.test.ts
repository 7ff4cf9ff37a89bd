// `tandem argo get` on a large run: Argo's --status, --node-field-selector and -o short, and the
// progress line (cli/argo.ts formatTree / treeView).
import type { ArgoNode, ArgoStatus } from '../../../argo/lang/types.js';
import { formatTree, treeView } from '../../../cli/argo.js';

const t = '2026-12-02T10:00:00Z';
function loop(n: number, failed: number[]): ArgoStatus {
  const nodes: Record<string, ArgoNode> = {};
  const pods = Array.from({ length: n }, (_, i) => `big-${i}`);
  nodes.big = { id: 'big', name: 'big', displayName: 'big', type: 'Steps', templateName: 'main', phase: failed.length ? 'Failed' : 'Succeeded', startedAt: t, finishedAt: t, children: ['big-g'] };
  nodes['big-g'] = { id: 'big-g', name: 'big[0]', displayName: '[0]', type: 'StepGroup', phase: 'Succeeded', parentId: 'big', children: pods, startedAt: t, finishedAt: t };
  pods.forEach((id, i) => {
    nodes[id] = { id, name: `big[0].echo(${i}:${i})`, displayName: `echo(${i}:${i})`, type: 'Pod', templateName: 'echo', phase: failed.includes(i) ? 'Failed' : 'Succeeded', parentId: 'big-g', children: [], startedAt: t, finishedAt: t, ...(failed.includes(i) ? { message: 'exit code 1' } : {}) };
  });
  return { name: 'big', phase: nodes.big.phase, startedAt: t, finishedAt: t, entrypoint: 'main', nodes } as ArgoStatus;
}

test('the progress line counts finished pods (failed ones too, as Argo does) of all pods, and -o short stops there', () => {
  const st = loop(2500, [17, 2003]);
  st.nodes['big-5']!.phase = 'Running';
  const short = formatTree(st, treeView({ output: 'short' }));
  expect(short).toMatch(/^Progress: +2499\/2500$/m);
  expect(short).not.toMatch(/STEP|echo/);
  expect(formatTree(st).split('\n').filter((l) => l.includes('echo('))).toHaveLength(2500);
});

test('--status lists only the nodes in that phase, flat, in tree order', () => {
  const tree = formatTree(loop(2500, [17, 2003]), treeView({ status: 'Failed' }));
  const rows = tree.split('\n').slice(tree.split('\n').findIndex((l) => l.startsWith('STEP')) + 1);
  expect(rows.map((l) => l.replace(/\s+/g, ' ').trim())).toEqual([expect.stringMatching(/^✖ big main/), expect.stringMatching(/^✖ echo\(17:17\) echo big-17 0s exit code 1$/), expect.stringMatching(/^✖ echo\(2003:2003\) echo big-2003 0s exit code 1$/)]);
});

test('--node-field-selector selects by displayName, templateName, name or id', () => {
  const tree = formatTree(loop(10, []), treeView({ nodeFieldSelector: 'displayName=echo(3:3)' }));
  expect(tree.split('\n').filter((l) => l.includes('echo('))).toEqual([expect.stringContaining('echo(3:3)')]);
  expect(formatTree(loop(10, []), treeView({ nodeFieldSelector: 'templateName=echo' })).split('\n').filter((l) => l.includes('echo('))).toHaveLength(10);
});

test('bad options name the flag before anything is read', () => {
  expect(() => treeView({ output: 'yaml' })).toThrow('-o yaml: json or short');
  expect(() => treeView({ status: 'failed' })).toThrow(/--status failed: one of Pending, Running, Succeeded/);
  expect(() => treeView({ nodeFieldSelector: 'phase:Failed' })).toThrow(/^--node-field-selector must look like displayName=<node>/);
  expect(() => treeView({ output: 'json', status: 'Failed' })).toThrow('--status and --node-field-selector apply to the node tree, not -o json');
});
