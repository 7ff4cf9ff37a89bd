// The one error for bad input a user wrote: a pipeline spec, a sites or quotas file, Kubernetes stage
// options, an Argo manifest. Each names every bad field (path, and the line when it is known) in
// `issues`; its message is formatIssues() of them, which is also what the CLI prints (no stack trace).
// Sandbox-safe: no Node built-ins, no imports.

export interface InputIssue {
  /** The file (or other input) the issue is in, when issues of one error may come from several. */
  source?: string;
  /** The field as users read it, e.g. `stages.train.steps` or `templates.main.steps[0][1].template`; '' for the whole input. */
  path: string;
  line?: number;
  column?: number;
  message: string;
}

/** What was invalid: the header of the message, e.g. `x.yaml: invalid pipeline spec`. */
export type InputKind = 'pipeline spec' | 'sites file' | 'quotas file' | 'Kubernetes options' | 'Argo' | (string & {});

export interface InputErrorOptions {
  /** The input all issues without their own `source` are in (a file name). */
  source?: string;
  /** Replaces the formatted message (an error whose one issue is a sentence of its own). */
  message?: string;
}

export class InputError extends Error {
  readonly source?: string;

  constructor(
    readonly what: InputKind,
    readonly issues: InputIssue[],
    opts: InputErrorOptions = {},
  ) {
    super(opts.message ?? formatIssues(issues, { what, source: opts.source }));
    this.name = 'InputError';
    if (opts.source !== undefined) this.source = opts.source;
  }
}

/**
 * One issue on one line. An issue that names its own source reads like a compiler's (`file:line: path:
 * message`, as `tandem argo lint` prints); one that does not is a bullet under its error's header
 * (`  - path (line N): message`).
 */
export function formatIssue(i: InputIssue): string {
  if (i.source !== undefined) {
    const at = i.line ? `:${i.line}${i.column ? `:${i.column}` : ''}` : '';
    return `${i.source}${at}: ${i.path ? `${i.path}: ` : ''}${i.message}`;
  }
  const at = i.line ? ` (line ${i.line}${i.column ? `, column ${i.column}` : ''})` : '';
  return `  - ${i.path || '(root)'}${at}: ${i.message}`;
}

/**
 * The text of an InputError: its issues one per line, under a header (`<source>: invalid <what>`)
 * when some issue does not name its own source.
 */
export function formatIssues(issues: InputIssue[], header: { what?: string; source?: string } = {}): string {
  const lines = issues.map(formatIssue);
  if (issues.every((i) => i.source !== undefined)) return lines.join('\n');
  return [`${header.source !== undefined ? `${header.source}: ` : ''}invalid ${header.what ?? 'input'}`, ...lines].join('\n');
}
