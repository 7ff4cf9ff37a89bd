// The sandbox layout (activities/argo/sandbox.ts) without running bwrap: which host paths are bound
// read-only, which pod paths are the pod's own, where outputs are read back, quantities, and the error
// a host without a working bwrap gets.
import { mkdtempSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuCores, hostPath, memoryBytes, probeSandbox, sandboxArgs, visibleUnder, type SandboxContainer } from '../../../activities/argo/sandbox.js';
import { whyNotRunnable } from '../../../argo/lint/runnable.js';

// A host with /usr, /etc (passwd, shadow), /bin → usr/bin, /mnt (holding `cdrom`), /home, /tmp and /proc.
const HOST: Record<string, string[]> = { '/': ['usr', 'etc', 'bin', 'mnt', 'home', 'tmp', 'proc'], '/mnt': ['cdrom'], '/etc': ['passwd', 'shadow'] };
const list = (d: string) => HOST[d]?.map((name) => (name === 'bin' ? { name, symlink: 'usr/bin' } : { name }));

function layout() {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-unit-'));
  return { root: join(dir, 'root'), volumesDir: join(dir, 'volumes') };
}
const pairs = (args: string[], flag: string) => args.flatMap((a, i) => (a === flag ? [`${args[i + 1]}→${args[i + 2]}`] : []));

test('only the system allowlist of the host is bound, read-only; /tmp and /proc are own; the directories above owned paths are rebuilt', () => {
  const l = layout();
  const c: SandboxContainer = { argv: ['/bin/true'], volumeMounts: [{ name: 'v', mountPath: '/mnt/vol' }], ownPaths: ['/mnt/out/total.json', '/result.txt'] };
  const args = sandboxArgs(c, l, list);
  expect(args.slice(0, 3)).toEqual(['--bind', l.root, '/']);
  // /home, /mnt/cdrom and /etc/shadow are not in the allowlist: absent, not merely read-only.
  expect(pairs(args, '--ro-bind')).toEqual(['/usr→/usr', '/etc/passwd→/etc/passwd']);
  expect(pairs(args, '--bind')).toEqual([`${l.root}→/`, `${join(l.volumesDir, 'v')}→/mnt/vol`]);
  expect(args).not.toContain('/tmp');
  expect(readlinkSync(join(l.root, 'bin'))).toBe('usr/bin');
  expect(args.slice(args.indexOf('--chdir'), args.indexOf('--chdir') + 3)).toEqual(['--chdir', '/', '--']);
  expect(args.at(-1)).toBe('/bin/true');
  expect(hostPath(c, l, '/mnt/out/total.json')).toBe(join(l.root, 'mnt/out/total.json'));
  expect(hostPath(c, l, '/mnt/vol/a/b')).toBe(join(l.volumesDir, 'v', 'a/b'));
  expect(hostPath(c, l, '/tmp/out')).toBe(join(l.root, 'tmp/out'));
  // An owned path is the pod's even where the host has the same path (the host's /usr/bin/env here).
  expect(hostPath({ ...c, ownPaths: ['/usr/bin/env'] }, l, '/usr/bin/env')).toBe(join(l.root, 'usr/bin/env'));
  expect(hostPath(c, l, '/usr/bin/env')).toBe('/usr/bin/env');
  // Host content the sandbox does not show is never read back on the pod's behalf.
  expect(hostPath(c, l, '/root/.bashrc')).toBe(join(l.root, 'root/.bashrc'));
  expect(args).toEqual(expect.arrayContaining(['--unshare-all', '--cap-drop', 'ALL']));
  expect(args).not.toContain('--share-net');
  expect(sandboxArgs({ ...c, network: 'host' }, layout(), list)).toContain('--share-net');
  expect(hostPath({ ...c, workingDir: '/src' }, l, 'rel.txt')).toBe(join(l.root, 'src/rel.txt'));
});

test('an output artifact of a directory the pod saw partly as host content (/etc, artifact-disable-archive.yaml) takes the bound entries, never a top-level tree or the read-only program', () => {
  const l = layout();
  const c: SandboxContainer = { argv: ['/bin/true'], volumeMounts: [{ name: 'v', mountPath: '/mnt/vol' }], ownPaths: [], readOnly: ['/opt/tandem'] };
  const etc = visibleUnder(c, l, '/etc');
  // This host's /etc entries on the allowlist (passwd is on every Linux host).
  expect(etc).toContain('/etc/passwd');
  expect(etc.every((p) => p.startsWith('/etc/'))).toBe(true);
  // At `/`: /etc's entries only; /usr and /lib (gigabytes of the host's programs) and the read-only program are not collected.
  const root = visibleUnder(c, l, '/');
  expect(root).toEqual(etc);
  expect(visibleUnder(c, l, '/opt')).toEqual([]);
  // A path inside a volume is the volume's, not the host's.
  expect(visibleUnder(c, l, '/mnt/vol')).toEqual([]);
  // A shown entry itself is collected by hostPath as before (/etc/os-release), not as its own child.
  expect(visibleUnder(c, l, '/etc/passwd')).toEqual([]);
});

test('limits run the program under prlimit: memory as RLIMIT_DATA, CPU time soft < hard', () => {
  const args = sandboxArgs({ argv: ['/bin/true'], volumeMounts: [], ownPaths: [], memoryBytes: 64 * 2 ** 20, cpuSeconds: 3 }, layout(), list);
  const at = args.findIndex((a) => a.endsWith('/prlimit'));
  expect(args.slice(at + 1)).toEqual([`--data=${64 * 2 ** 20}`, '--cpu=3:4', '--', '/bin/true']);
});

test('Kubernetes quantities', () => {
  expect(memoryBytes('64Mi')).toBe(64 * 2 ** 20);
  expect(memoryBytes('1G')).toBe(1e9);
  expect(memoryBytes('lots')).toBeUndefined();
  expect(cpuCores('200m')).toBeCloseTo(0.2);
  expect(cpuCores('2')).toBe(2);
});

test('a host without bwrap, or where it cannot create namespaces, gets an error saying what is missing', () => {
  expect(probeSandbox(undefined)).toEqual({ error: expect.stringContaining('bwrap is not installed: run scripts/argo/install.sh') });
  expect(probeSandbox('/bin/false')).toEqual({ error: expect.stringContaining('user namespaces') });
});

test('emptyDir volumes and init containers are runnable here; Secret volumes and PVCs are not', () => {
  const wf = (volume: object, extra: object = {}) => ({
    entrypoint: 'main',
    volumes: [{ name: 'v', ...volume }],
    templates: [{ name: 'main', container: { image: 'alpine', command: ['echo', 'hi'], volumeMounts: [{ name: 'v', mountPath: '/v' }] }, ...extra }],
  });
  expect(whyNotRunnable(wf({ emptyDir: {} }, { initContainers: [{ name: 'i', image: 'alpine', command: ['echo'], mirrorVolumeMounts: true }] }))).toBeUndefined();
  expect(whyNotRunnable(wf({ secret: { secretName: 's' } }))).toContain('secret volumes need Kubernetes');
  expect(whyNotRunnable({ ...wf({ emptyDir: {} }), volumes: [], volumeClaimTemplates: [{ metadata: { name: 'v' } }] })).toContain('PVC needs Kubernetes');
  expect(whyNotRunnable(wf({ emptyDir: {} }, { initContainers: [{ name: 'i', image: 'alpine' }] }))).toContain('init container i');
});
