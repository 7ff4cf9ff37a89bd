// The chaos matrix's smaller subset inside the normal tests: `npm run chaos -- a,d,e,f` with one worker
// kill, on its own real Temporal server and two real Slurm sites (the full matrix: `npm run chaos`).
// Rows (b) and (c) run in failover.long.test.ts with finer assertions.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function runChaos(rows: string, env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/chaos/run.ts', rows], { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

test('chaos subset: worker kills, gateway faults, both sites down, Temporal restart', async () => {
  const { code, out, err } = await runChaos('a,d,e,f', { CHAOS_TRIALS: '1', CHAOS_REPEAT: '1' });
  const rows = out.split('\n').filter((l) => /^\| \([a-f]\) \|/.test(l)).map((l) => l.split('|').map((c) => c.trim()));
  const detail = `${out}\n${err.split('\n').filter((l) => /^\([a-f]\)/.test(l)).join('\n')}`;
  expect({ code, rows: rows.map((r) => r[1]) }).toEqual({ code: 0, rows: ['(a)', '(d)', '(e)', '(f)'] });
  for (const r of rows) {
    const [, row, , trials, completed, duplicates, leaked, overlaps] = r;
    // Every trial reaches its expected end: completed, or (e) failed cleanly after waiting.
    expect({ row, completed, duplicates, leaked, overlaps, detail: completed === `${trials}/${trials}` ? '' : detail }).toEqual({ row, completed: `${trials}/${trials}`, duplicates: '0', leaked: '0', overlaps: '0', detail: '' });
  }
}, 900_000);
