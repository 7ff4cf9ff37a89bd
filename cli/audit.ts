// `tandem audit list | verify`: the tamper-evident audit log (audit/log.ts) of the workers' external
// side effects. The log is a file (TANDEM_AUDIT_LOG, default <TANDEM_HOME>/audit.jsonl): run these
// where the workers write it. `verify` exits 1 and names the record (seq and line) when the chain is
// broken: a record edited, removed, reordered, or cut off the end, a record or head without the key's
// MAC (forged), a log behind its anchor (cut or rolled back) or missing (deleted). It needs the key
// (TANDEM_AUDIT_KEY_FILE): without it, it says so and exits 2.
import type { Command } from 'commander';
import { loadAuditConfig } from '../config/worker.js';
import { AuditKeyError, loadAuditKey, readAudit, verifyAudit, type AuditRecord } from '../audit/log.js';

export const AUDIT_SUMMARY = 'list and verify the tamper-evident audit log of external side effects (operators)';

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => (cell ?? '').padEnd(widths[c]!)).join('  ').trimEnd()).join('\n');
}

const brief = (d: Record<string, unknown> | undefined) =>
  Object.entries(d ?? {})
    .filter(([, v]) => v !== null && typeof v !== 'object')
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ')
    .slice(0, 100);

export function formatAuditList(records: AuditRecord[]): string {
  if (!records.length) return 'no audit records match';
  return table([
    ['SEQ', 'AT', 'WHAT', 'TENANT', 'RUN', 'WHERE', 'DETAILS'],
    ...records.map((r) => [String(r.seq), r.at, r.what, r.who.tenant ?? '-', r.who.run ?? '-', [r.where.site, r.where.runtime].filter(Boolean).join('/') || '-', brief(r.details)]),
  ]);
}

const file = (o: { file?: string }) => o.file ?? loadAuditConfig().file;
const keyFile = (o: { key?: string }) => o.key ?? loadAuditConfig().keyFile;

export async function registerAuditCommands(program: Command): Promise<void> {
  const audit = program.command('audit').description(AUDIT_SUMMARY);
  audit
    .command('list')
    .description('print the records, oldest first')
    .option('--tenant <tenant>', "only this tenant's records")
    .option('--run <id>', "only this run's records")
    .option('--file <audit.jsonl>', 'the log (default TANDEM_AUDIT_LOG, or <TANDEM_HOME>/audit.jsonl)')
    .option('--json', 'one JSON record a line, as stored')
    .action((o: { tenant?: string; run?: string; file?: string; json?: boolean }) => {
      const { records } = readAudit(file(o));
      const match = records.map((r) => r.record).filter((r) => (o.tenant === undefined || r.who?.tenant === o.tenant) && (o.run === undefined || r.who?.run === o.run));
      console.log(o.json ? match.map((r) => JSON.stringify(r)).join('\n') : formatAuditList(match));
    });
  audit
    .command('verify')
    .description('check the hash chain; exit 1 naming each record that was modified, removed or reordered')
    .option('--file <audit.jsonl>', 'the log (default TANDEM_AUDIT_LOG, or <TANDEM_HOME>/audit.jsonl)')
    .option('--key <file>', 'its HMAC key (default TANDEM_AUDIT_KEY_FILE, or <TANDEM_HOME>/keys/audit.key)')
    .option('--json', 'machine-readable verdict')
    .action((o: { file?: string; key?: string; json?: boolean }) => {
      const f = file(o);
      let key;
      try {
        key = loadAuditKey(keyFile(o), f, false);
      } catch (e) {
        if (!(e instanceof AuditKeyError)) throw e;
        console.error(`${f}: cannot verify: ${e.message}`);
        process.exitCode = 2;
        return;
      }
      const v = verifyAudit(f, key);
      if (o.json) console.log(JSON.stringify({ file: f, ...v }, null, 2));
      else if (v.ok) console.log(`${f}: ${v.records} records, chain and MACs intact${v.head ? ` (head seq ${v.head.seq}, ${v.head.hash.slice(0, 12)}…)` : ''}`);
      else console.log(`${f}: the chain is BROKEN (${v.problems.length} problem${v.problems.length === 1 ? '' : 's'} in ${v.records} records):\n${v.problems.map((p) => `  ${p.line ? `line ${p.line}` : 'log'}${p.seq !== undefined ? ` (seq ${p.seq})` : ''}: ${p.message}`).join('\n')}`);
      if (!v.ok) process.exitCode = 1;
    });
}
