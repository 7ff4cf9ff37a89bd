// The tamper-evident audit log (audit/log.ts): a hash chain that `verify` checks record by record,
// naming the seq and line of a record that was edited, removed, reordered or cut off; appends that
// stay one chain under concurrency, in one process and across processes.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AuditLog, canonicalJson, loadAuditKey, readAudit, verifyAudit, GENESIS_HASH } from '../../../audit/log.js';

const dir = mkdtempSync(join(tmpdir(), 'tandem-audit-'));
let n = 0;
const fresh = () => join(dir, `audit-${++n}.jsonl`);

async function logOf(count: number): Promise<string> {
  const file = fresh();
  const log = new AuditLog(file, 'op@test');
  for (let i = 0; i < count; i++) await log.append({ who: { tenant: 'acme', run: `run-${i % 2}` }, what: i % 2 ? 'job.cancelled' : 'job.submitted', where: { site: 'local', runtime: 'local' }, details: { jobId: String(i) } });
  return file;
}
const lines = (f: string) => readFileSync(f, 'utf8').trimEnd().split('\n');
const rewrite = (f: string, ls: string[]) => writeFileSync(f, ls.join('\n') + '\n');

test('records chain: seq from 1, prevHash the previous hash, operator filled in', async () => {
  const file = await logOf(3);
  const { records } = readAudit(file);
  expect(records.map((r) => r.record.seq)).toEqual([1, 2, 3]);
  expect(records[0]!.record.prevHash).toBe(GENESIS_HASH);
  expect(records[1]!.record.prevHash).toBe(records[0]!.record.hash);
  expect(records[0]!.record).toMatchObject({ who: { tenant: 'acme', run: 'run-0', operator: 'op@test' }, what: 'job.submitted', where: { site: 'local' } });
  expect(verifyAudit(file)).toMatchObject({ ok: true, records: 3, problems: [], head: { seq: 3 } });
});

test('canonical JSON sorts keys at every level', () => {
  expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null }, u: undefined })).toBe('{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}');
});

test('one byte edited anywhere in a record: verify names that record', async () => {
  const file = await logOf(5);
  const ls = lines(file);
  // Change one character of record 3's details (jobId "2" → "7").
  ls[2] = ls[2]!.replace('"jobId":"2"', '"jobId":"7"');
  rewrite(file, ls);
  const v = verifyAudit(file);
  expect(v.ok).toBe(false);
  expect(v.problems).toEqual([{ line: 3, seq: 3, message: 'record seq 3 was modified: its hash does not match its content' }]);
});

test('an edit with a recomputed hash still breaks the chain at the next record', async () => {
  const file = await logOf(4);
  const { records } = readAudit(file);
  const { recordHash } = await import('../../../audit/log.js');
  const r2 = { ...records[1]!.record, what: 'job.submitted' };
  const rest: Omit<typeof r2, 'hash'> & { hash?: string } = { ...r2 };
  delete rest.hash;
  const forged = { ...rest, hash: recordHash(rest) };
  const ls = lines(file);
  ls[1] = canonicalJson(forged);
  rewrite(file, ls);
  expect(verifyAudit(file).problems).toEqual([expect.objectContaining({ line: 3, seq: 3, message: expect.stringMatching(/does not follow record seq 2 \(line 2\)/) })]);
});

test('a removed record is named', async () => {
  const file = await logOf(5);
  const ls = lines(file);
  ls.splice(2, 1); // seq 3
  rewrite(file, ls);
  const v = verifyAudit(file);
  expect(v.problems).toEqual([{ line: 3, seq: 4, message: 'record seq 3 is missing before this record (seq 4)' }]);
});

test('two records swapped are named as out of order', async () => {
  const file = await logOf(5);
  const ls = lines(file);
  [ls[1], ls[2]] = [ls[2]!, ls[1]!];
  rewrite(file, ls);
  const v = verifyAudit(file);
  expect(v.ok).toBe(false);
  expect(v.problems[0]).toEqual({ line: 2, seq: 3, message: 'record seq 3 is out of order: seq 2 comes after it, on line 3' });
  expect(v.problems.map((p) => p.line)).toEqual([2, 3]);
});

test('records cut off the end, a torn last line, and garbage are found', async () => {
  const file = await logOf(4);
  rewrite(file, lines(file).slice(0, 3));
  expect(verifyAudit(file).problems).toEqual([expect.objectContaining({ line: 3, seq: 3, message: expect.stringMatching(/head file says seq 4: records were removed from the end/) })]);
  const torn = await logOf(2);
  writeFileSync(torn, readFileSync(torn, 'utf8').slice(0, -5));
  expect(verifyAudit(torn).problems.map((p) => p.message)).toEqual(expect.arrayContaining([expect.stringMatching(/last line is incomplete/)]));
  await expect(new AuditLog(torn).append({ who: {}, what: 'x', where: {} })).rejects.toThrow(/ends with an incomplete record/);
  const junk = await logOf(2);
  rewrite(junk, [lines(junk)[0]!, 'not json', lines(junk)[1]!]);
  expect(verifyAudit(junk).problems).toEqual([expect.objectContaining({ line: 2, message: expect.stringMatching(/is not an audit record/) })]);
});

test('concurrent appends in one process make one unbroken chain', async () => {
  const file = fresh();
  const log = new AuditLog(file, 'op');
  const other = new AuditLog(file, 'op2'); // a second instance on the same file shares the queue
  await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? log : other).append({ who: {}, what: 'job.submitted', where: {}, details: { i } })));
  expect(verifyAudit(file)).toMatchObject({ ok: true, records: 100 });
});

test('concurrent appends from several processes make one unbroken chain (lock file, O_APPEND)', async () => {
  const file = fresh();
  const script = `import { AuditLog } from ${JSON.stringify(resolve('audit/log.ts'))};
const log = new AuditLog(process.argv[1], 'proc-' + process.pid);
for (let i = 0; i < 40; i++) await log.append({ who: {}, what: 'job.submitted', where: {}, details: { i } });`;
  const run = () =>
    new Promise<number>((res, rej) => {
      const p = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, file], { stdio: ['ignore', 'inherit', 'inherit'] });
      p.on('error', rej);
      p.on('exit', (code) => res(code ?? -1));
    });
  expect(await Promise.all([run(), run(), run()])).toEqual([0, 0, 0]);
  const v = verifyAudit(file);
  expect(v).toMatchObject({ ok: true, records: 120 });
  expect(new Set(readAudit(file).records.map((r) => r.record.who.operator)).size).toBe(3);
});

test('a forged MAC of 64 characters that are not hex is a mismatch named as such, not a crash', async () => {
  const file = fresh();
  const key = loadAuditKey(join(dir, `keys-${n}`, 'audit.key'), file, true);
  const log = new AuditLog(file, 'op@test', key);
  for (let i = 0; i < 3; i++) await log.append({ who: { tenant: 'acme' }, what: 'job.submitted', where: { site: 'local' } });
  const ls = lines(file);
  const r = JSON.parse(ls[1]!) as { mac: string };
  r.mac = 'z'.repeat(64);
  ls[1] = canonicalJson(r);
  rewrite(file, ls);
  const head = JSON.parse(readFileSync(`${file}.head`, 'utf8')) as { mac?: string };
  head.mac = 'g'.repeat(64);
  writeFileSync(`${file}.head`, JSON.stringify(head));
  const v = verifyAudit(file, key);
  expect(v.ok).toBe(false);
  expect(v.problems.map((p) => `${p.seq ?? '-'}: ${p.message}`)).toEqual(expect.arrayContaining(['2: record seq 2 was forged or modified: its MAC does not match (written without the key)', expect.stringMatching(/head file .* was forged/)]));
});

test('the first keyed append to a log written without a key sets it aside and names it; the keyed log then verifies', async () => {
  const file = await logOf(3); // unkeyed, as before workers had a key
  const key = loadAuditKey(join(dir, `keys-up-${n}`, 'audit.key'), file, true);
  const log = new AuditLog(file, 'op@test', key);
  await log.append({ who: { tenant: 'acme' }, what: 'job.submitted', where: { site: 'local' } });
  const records = readAudit(file).records.map((r) => r.record);
  expect(records.map((r) => r.what)).toEqual(['audit.keyed', 'job.submitted']);
  const previous = records[0]!.details!.previous as string;
  expect(records[0]!.details).toMatchObject({ previousRecords: 3, previousHash: expect.stringMatching(/^[0-9a-f]{64}$/) });
  expect(verifyAudit(file, key)).toMatchObject({ ok: true, records: 2 });
  expect(verifyAudit(previous)).toMatchObject({ ok: true, records: 3 }); // the old chain, intact where it went
  // Once keyed, never again: a later append does not set the keyed log aside.
  await log.append({ who: {}, what: 'job.cancelled', where: {} });
  expect(readAudit(file).records.map((r) => r.record.what)).toEqual(['audit.keyed', 'job.submitted', 'job.cancelled']);
});
