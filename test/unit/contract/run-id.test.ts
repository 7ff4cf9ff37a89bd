// Workflow ids name run directories under TANDEM_HOME: refused at the SDK boundary unless they are
// one safe path segment (contract/run-id.ts), and runDirs refuses any key that would escape anyway.
// Ports of `tandem dev` are numbers from 1 to 65535 (cli/port.ts).
import { InvalidArgumentError } from 'commander';
import type { Client } from '@temporalio/client';
import { join } from 'node:path';
import { checkRunId } from '../../../contract/run-id.js';
import { InputError } from '../../../contract/input-error.js';
import { runDirs } from '../../../activities/run-store.js';
import { checkPort, parsePort } from '../../../cli/port.js';
import { TandemClient } from '../../../sdk/client.js';
import { Runs } from '../../../sdk/runs.js';

test.each(['..', '.', '../../etc', 'a/b', '/abs', '', '-flag', 'x'.repeat(201), 'run\0x', 'a b', 'run:1'])('workflow id %j is refused, naming the field', (id) => {
  expect(() => checkRunId(id, 'newId')).toThrow(InputError);
  expect(() => checkRunId(id, 'newId')).toThrow(/^workflow id .* \(newId\) is not allowed: use letters, digits/);
});

test.each(['demo-1a2b3c4d', 'e2e-demo', 'Run_2.retry-r0a1', 'x'.repeat(200)])('workflow id %j is fine', (id) => {
  expect(checkRunId(id)).toBe(id);
});

test('launch and resume refuse a bad id before they talk to the server', async () => {
  // A client whose every call would fail: the id check must come first.
  const unreachable = new Proxy({}, {
    get: () => {
      throw new Error('the server was contacted');
    },
  }) as Client;
  const tandem = await TandemClient.connect({ client: unreachable, taskQueue: 'q' });
  await expect(tandem.launch({ name: 'x' }, { id: '../../etc' })).rejects.toThrow(/workflow id "\.\.\/\.\.\/etc" \(id\) is not allowed/);
  await expect(new Runs(tandem).resume('old-run', { newId: '..' })).rejects.toThrow(/workflow id "\.\." \(newId\) is not allowed/);
});

test('runDirs never leaves <home>/runs', () => {
  expect(runDirs('/h', 'demo-1').root).toBe(join('/h', 'runs', 'demo-1'));
  expect(runDirs('/h', 'a/b').root).toBe(join('/h', 'runs', 'a_b')); // keys of older runs map as before
  expect(runDirs('/h', '../../etc').root).toBe(join('/h', 'runs', '.._.._etc'));
  for (const key of ['..', '.', '']) expect(() => runDirs('/h', key)).toThrow(/run key .* does not name a directory under \/h\/runs/);
});

test('ports: commander gets a clear error for anything but 1..65535; runDev callers too', () => {
  expect(parsePort('7233')).toBe(7233);
  for (const bad of ['abc', '', '0', '65536', '12.5', '-1', '1e3', '0x10']) expect(() => parsePort(bad)).toThrow(InvalidArgumentError);
  expect(() => parsePort('abc')).toThrow('must be a TCP port number from 1 to 65535.');
  expect(() => checkPort('--port', Number.NaN)).toThrow('--port NaN is not a TCP port number from 1 to 65535');
});
