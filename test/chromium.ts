// Headless Chromium for the web view's tests (test/ui.test.ts, test/ui-slurm.long.test.ts): Debian's
// `chromium` (scripts/ui/install-chromium.sh). On CI a missing chromium fails the suites; elsewhere
// their browser tests are skipped with a warning.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './helpers.js';

export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const ON_CI = !!process.env.CI;
export const browserTest = CHROMIUM || ON_CI ? test : test.skip;
export function warnIfNoChromium(suite: string): void {
  if (!CHROMIUM && !ON_CI) console.warn(`${suite}: the browser tests are skipped: no chromium here (install it with scripts/ui/install-chromium.sh); on CI they fail instead`);
}
export const ARTIFACTS = join(process.cwd(), 'test', 'artifacts', 'ui');

/** One bounded chromium run: killed with its whole process group if it outlives `timeoutMs`. */
export function chromium(args: string[], opts: { timeoutMs?: number; window?: string } = {}): Promise<string> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  if (!CHROMIUM) throw new Error('chromium is not installed (scripts/ui/install-chromium.sh; Debian package "chromium")');
  const profile = tempDir('chromium-profile');
  const flags = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check', '--disable-extensions', '--hide-scrollbars', `--user-data-dir=${profile}`, `--window-size=${opts.window ?? '1280,900'}`];
  return new Promise((resolve, reject) => {
    const p = spawn(CHROMIUM, [...flags, ...args], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => {
      try {
        process.kill(-p.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
      reject(new Error(`chromium did not finish within ${timeoutMs} ms: ${err.slice(-2000)}`));
    }, timeoutMs);
    p.on('error', reject);
    p.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`chromium exited ${code}: ${err.slice(-2000)}`));
    });
  });
}
