// Human-readable progress for `tandem run`: one line per timeline entry and an in-place progress bar
// for training steps on a terminal (a line every 10% elsewhere, so CI logs stay short).
import type { ProgressEvent } from '../sdk/client.js';
import type { PipelineStatus } from '../contract/status.js';

export function bar(fraction: number, width = 30): string {
  const f = Math.max(0, Math.min(1, fraction));
  const full = Math.round(f * width);
  return `[${'#'.repeat(full)}${'-'.repeat(width - full)}] ${(f * 100).toFixed(0).padStart(3)}%`;
}

export function elapsed(ms: number): string {
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  return `${m}m${String(Math.floor(s % 60)).padStart(2, '0')}s`;
}

export class ProgressPrinter {
  private barShown = false;
  private lastDecile = -1;
  constructor(
    private readonly out: NodeJS.WriteStream = process.stdout,
    private readonly started = Date.now(),
  ) {}

  private line(text: string): void {
    if (this.barShown) this.out.write('\r\x1b[2K');
    this.barShown = false;
    this.out.write(`${text}\n`);
  }

  handle(ev: ProgressEvent): void {
    let t = `[${elapsed(Date.now() - this.started).padStart(6)}]`;
    if (ev.type === 'timeline') {
      const e = ev.entry;
      t = `[${elapsed(Math.max(0, Date.parse(e.at) - this.started)).padStart(6)}]`;
      const stage = (e.stage ?? 'pipeline').padEnd(10);
      const attempt = e.attempt ? `#${e.attempt} ` : '';
      this.line(`${t} ${stage} ${attempt}${e.message}`);
    } else if (ev.type === 'progress') {
      const p = ev.progress;
      const text = `${t} train      #${ev.attempt} ${bar(p.step / p.total)} step ${p.step}/${p.total}${p.loss !== undefined ? ` loss ${p.loss.toFixed(4)}` : ''}${p.resumedFromStep ? ` (resumed at ${p.resumedFromStep})` : ''}`;
      if (this.out.isTTY) {
        this.out.write(`\r\x1b[2K${text}`);
        this.barShown = true;
      } else {
        const decile = Math.floor((p.step / p.total) * 10);
        if (decile !== this.lastDecile) this.line(text);
        this.lastDecile = decile;
      }
    }
  }
}

export function formatStatus(s: PipelineStatus): string {
  const rows = Object.entries(s.stages).map(([name, st]) => {
    const extra = [st.runtime && `runtime=${st.runtime}`, st.jobId && `job=${st.jobId}`, st.progress && `step=${st.progress.step}/${st.progress.total}`, st.error && `error=${st.error.split('\n')[0]}`].filter(Boolean).join(' ');
    return `  ${name.padEnd(11)} ${st.status.padEnd(12)} attempts=${st.attempts} ${extra}`;
  });
  const head = `${s.workflowId}  pipeline=${s.pipeline} tenant=${s.tenant} phase=${s.phase}${s.stage ? ` stage=${s.stage}` : ''}`;
  const tail = s.result ? [`  endpoint    ${s.result.endpoint}`, `  checkpoint  step ${s.result.checkpoint.step} (${s.result.checkpoint.path})`, `  completion  ${s.result.completion}`] : [];
  return [head, ...rows, ...tail].join('\n');
}
