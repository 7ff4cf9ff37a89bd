// ConfigError: every problem of a configuration in one message, so that an operator fixes them all in
// one go instead of one per restart. It is an InputError, so the CLI prints it like every other bad
// input (cli/errors.ts: the message, no stack trace); `npm run worker` does the same. A stack trace would
// only point into the loader, never at the variable or the file line to fix.
import { InputError, type InputIssue } from '../contract/input-error.js';

export interface ConfigIssue extends InputIssue {
  /** What to fix: `VARIABLE=value` (`VARIABLE` alone when unset or secret), or `config/defaults.ts`. */
  source: string;
}

/** The exit code of `npm run worker` on a configuration error: the CLI's code for bad input. */
export const CONFIG_EXIT_CODE = 2;

export function formatConfigIssue(i: ConfigIssue): string {
  return `  ${i.source}${i.line ? ` (line ${i.line})` : ''}: ${i.path ? `${i.path}: ` : ''}${i.message}`;
}

export class ConfigError extends InputError {
  declare readonly issues: ConfigIssue[];

  constructor(issues: ConfigIssue[]) {
    super('configuration', issues, { message: `tandem: invalid configuration:\n${issues.map(formatConfigIssue).join('\n')}` });
    this.name = 'ConfigError';
  }
}
