// How a script template runs on this host, as Argo's controller builds its container (operator.go
// executeScript, v3.7.9): the staged source's path comes after the container's args, and a script
// with an empty source stages nothing and runs as a container. Before, the path came first (`bash
// -x` ran the script with "-x" as its $1) and a script without source ran `sh <missing file>`.
import { basename } from 'node:path';
import { localArgv } from '../../../argo/local-command.js';

const FILE = '/argo/staging/script';
const run = (input: Parameters<typeof localArgv>[0]) => {
  const r = localArgv(input, FILE);
  return r.argv ? [basename(r.argv[0]!), ...r.argv.slice(1)] : r.reason;
};

test('a script: command, then args, then the staged source', () => {
  expect(run({ kind: 'script', command: ['bash'], args: ['-x'], source: 'echo hi', image: 'bash' })).toEqual(['bash', '-x', FILE]);
  expect(run({ kind: 'script', command: ['sh', '-e'], args: [], source: 'echo hi', image: 'alpine' })).toEqual(['sh', '-e', FILE]);
  expect(run({ kind: 'script', command: [], args: [], source: 'echo hi', image: 'alpine' })).toEqual(['sh', FILE]);
});

test('a script without source runs as a container: its command and args, or not here without a command', () => {
  expect(run({ kind: 'script', command: ['echo'], args: ['[]'], image: 'alpine' })).toEqual(['echo', '[]']);
  expect(run({ kind: 'script', command: [], args: ['echo', '[]'], source: '', image: 'argoproj/argosay:v2' })).toBe('container image argoproj/argosay:v2 has no command: its entrypoint is unknown without a container runtime');
  expect(run({ kind: 'container', command: ['echo'], args: ['a', 'b'], image: 'alpine' })).toEqual(['echo', 'a', 'b']);
});
