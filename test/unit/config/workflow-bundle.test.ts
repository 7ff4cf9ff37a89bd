// A prebuilt workflow bundle's header (config/workflow-bundle.ts) and TANDEM_WORKFLOW_BUNDLE's check in
// the worker's configuration: a bundle that does not fit the worker is refused before it connects.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { bundleHeader, bundleMismatch, readBundleFlavour, type BundleFlavour } from '../../../config/workflow-bundle.js';
import { loadWorkerConfig } from '../../../config/worker.js';
import { tandemVersion } from '../../../config/version.js';
import { configError } from '../config-error.js';

const dir = mkdtempSync(join(tmpdir(), 'tandem-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const bundleFile = (name: string, head: string) => {
  const p = join(dir, name);
  writeFileSync(p, `${head}\n(function(){ /* workflow code */ })();\n`);
  return p;
};
const plain: BundleFlavour = { tandem: tandemVersion(), encrypted: false, tracing: false };

describe('the bundle header', () => {
  test('round trip: what the header says is what is read back, and the header is a JavaScript comment', () => {
    for (const f of [plain, { ...plain, encrypted: true }, { ...plain, tracing: true }, { tandem: '9.9.9', encrypted: true, tracing: true }]) {
      const p = bundleFile('round.js', bundleHeader(f));
      expect(readBundleFlavour(p)).toEqual(f);
      expect(bundleHeader(f).startsWith('//')).toBe(true);
    }
  });

  test('a file without the header, or with a damaged one, has no flavour', () => {
    expect(readBundleFlavour(bundleFile('none.js', '(function(){})();'))).toBeUndefined();
    expect(readBundleFlavour(bundleFile('cut.js', '// tandem-workflow-bundle {"tandem":"1.0.0","encr'))).toBeUndefined();
    expect(readBundleFlavour(bundleFile('types.js', '// tandem-workflow-bundle {"tandem":"1.0.0","encrypted":"yes","tracing":false}'))).toBeUndefined();
  });

  test('each difference is named, all of them together, with how to rebuild', () => {
    expect(bundleMismatch(plain, plain)).toBeUndefined();
    expect(bundleMismatch(undefined, plain)).toMatch(/not a bundle written by `tandem bundle`/);
    expect(bundleMismatch({ ...plain, tandem: '0.0.1' }, plain)).toMatch(new RegExp(`Tandem 0\\.0\\.1, and this worker is Tandem ${tandemVersion().replace(/\./g, '\\.')}`));
    expect(bundleMismatch({ ...plain, encrypted: true }, plain)).toMatch(/built for a worker with payload keys, and this worker has none \(TANDEM_CODEC_\*\)/);
    expect(bundleMismatch(plain, { ...plain, encrypted: true })).toMatch(/without payload keys, and this worker has keys.*in clear/);
    expect(bundleMismatch({ ...plain, tracing: true }, plain)).toMatch(/built with tracing, and tracing is off/);
    expect(bundleMismatch(plain, { ...plain, tracing: true })).toMatch(/without tracing, and OTEL_\* turns tracing on/);
    const all = bundleMismatch({ tandem: '0.0.1', encrypted: true, tracing: true }, plain)!;
    expect(all.split('; ').filter((p) => /^(it holds|it was built)/.test(p.replace(/^does not fit this worker: /, '')))).toHaveLength(3);
    expect(all).toMatch(/rebuild it with `tandem bundle <file>`/);
  });
});

describe('TANDEM_WORKFLOW_BUNDLE', () => {
  test('a bundle that fits the worker is taken', () => {
    const p = bundleFile('fits.js', bundleHeader(plain));
    expect(loadWorkerConfig({ TANDEM_WORKFLOW_BUNDLE: p }, { cwd: dir }).workflowBundle).toBe(p);
    expect(loadWorkerConfig({}, { cwd: dir }).workflowBundle).toBeUndefined();
  });

  test('a bundle built without payload keys is refused by a worker that has them, naming the variable', () => {
    const p = bundleFile('plain.js', bundleHeader(plain));
    const key = randomBytes(32).toString('base64');
    const e = configError(() => loadWorkerConfig({ TANDEM_WORKFLOW_BUNDLE: p, TANDEM_CODEC_KEY: key, TANDEM_CODEC_KEY_ID: 'k1' }, { cwd: dir }));
    expect(e.message).toContain(`TANDEM_WORKFLOW_BUNDLE=${p}`);
    expect(e.message).toMatch(/without payload keys, and this worker has keys/);
    expect(e.message).not.toContain(key);
    // The same bundle built for keys fits.
    const enc = bundleFile('enc.js', bundleHeader({ ...plain, encrypted: true }));
    expect(loadWorkerConfig({ TANDEM_WORKFLOW_BUNDLE: enc, TANDEM_CODEC_KEY: key, TANDEM_CODEC_KEY_ID: 'k1' }, { cwd: dir }).workflowBundle).toBe(enc);
  });

  test('another version, a file with no header and a missing file are refused', () => {
    expect(configError(() => loadWorkerConfig({ TANDEM_WORKFLOW_BUNDLE: bundleFile('old.js', bundleHeader({ ...plain, tandem: '0.0.1' })) }, { cwd: dir })).message).toMatch(/TANDEM_WORKFLOW_BUNDLE=.*Tandem 0\.0\.1/);
    expect(configError(() => loadWorkerConfig({ TANDEM_WORKFLOW_BUNDLE: bundleFile('bare.js', '(function(){})();') }, { cwd: dir })).message).toMatch(/TANDEM_WORKFLOW_BUNDLE=.*no tandem-workflow-bundle header/);
    expect(configError(() => loadWorkerConfig({ TANDEM_WORKFLOW_BUNDLE: join(dir, 'nope.js') }, { cwd: dir })).message).toMatch(/TANDEM_WORKFLOW_BUNDLE=.*nope\.js/);
  });
});
