// A jest reporter: appends one line per test file (seconds, lane, path) to the file named by
// TANDEM_SUITE_TIMES, so `.ci/run` can print the slowest suites of all its lanes at the end
// (scripts/ci/suite-times.mjs). Prints nothing; without the variable it does nothing.
import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';

export default class SuiteTimes {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.file = process.env.TANDEM_SUITE_TIMES;
    this.lane = process.env.npm_lifecycle_event ?? 'jest';
  }

  onTestFileResult(test, result) {
    if (!this.file) return;
    const s = ((result.perfStats.end - result.perfStats.start) / 1000).toFixed(1);
    const status = result.numFailingTests || result.testExecError ? 'failed' : 'passed';
    appendFileSync(this.file, `${s}\t${this.lane}\t${status}\t${relative(this.rootDir, test.path)}\n`);
  }
}
