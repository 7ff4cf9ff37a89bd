// Files a user names (a spec, an Argo manifest, a trace, an inventory, a token file) are read with a
// bound and the reason in words: a device or pipe that never ends is an error, not memory without
// bound, and a pipe that does end (`<(zcat trace.gz)`) is read whole.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileTooLarge, readInput, readInputAsync, readProblem, sizeText } from '../../../config/input-file.js';

let dir: string;
beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'tandem-input-'))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const problem = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    return readProblem(e);
  }
  throw new Error('expected an error');
};

describe('readInput', () => {
  test('a file at the bound is read whole; one byte more is FileTooLarge', () => {
    const f = join(dir, 'ten');
    writeFileSync(f, '0123456789');
    expect(readInput(f, 10).toString()).toBe('0123456789');
    expect(() => readInput(f, 9)).toThrow(FileTooLarge);
    expect(problem(() => readInput(f, 9))).toBe('more than 9 bytes: larger than this input may be');
    writeFileSync(join(dir, 'empty'), '');
    expect(readInput(join(dir, 'empty'), 10).length).toBe(0);
  });

  test('a device that never ends stops at the bound (readFileSync read /dev/zero until memory ran out)', async () => {
    expect(() => readInput('/dev/zero', 1 << 20)).toThrow(FileTooLarge);
    await expect(readInputAsync('/dev/zero', 1 << 20)).rejects.toThrow(FileTooLarge);
  });

  test('a pipe is read as it comes, to its end', async () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    // More than one pipe buffer (64 KiB), so the read loop goes round.
    const writer = spawn('sh', ['-c', 'yes x | head -c 200000 > "$0"', fifo], { stdio: 'ignore' });
    const done = new Promise((r) => writer.on('exit', r));
    const got = await readInputAsync(fifo, 1 << 20);
    await done;
    expect(got.toString()).toBe('x\n'.repeat(100_000));
  });

  test('what is wrong with the path, in words', () => {
    expect(problem(() => readInput(join(dir, 'missing'), 10))).toBe('no such file');
    expect(problem(() => readInput(dir, 10))).toBe('a directory, not a file');
    expect(problem(() => readInput(join(dir, 'ten', 'x'), 10))).toBe('a part of the path is not a directory');
  });

  test('sizes as users read them', () => {
    expect([sizeText(16 * 2 ** 20), sizeText(64 * 1024), sizeText(100)]).toEqual(['16 MiB', '64 KiB', '100 bytes']);
  });
});
