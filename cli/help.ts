// The "Examples:" block of a command's --help: each line a command a user can paste, with an optional
// "# why" comment. test/cli-help.test.ts runs every main command's --help and checks that each example
// names a real command and only options that command (or the program) has.
export function examples(...lines: string[]): string {
  const width = Math.max(...lines.map((l) => l.split('  # ')[0]!.length));
  return `\nExamples:\n${lines.map((l) => {
    const [cmd, why] = l.split('  # ');
    return `  ${why ? `${cmd!.padEnd(width)}  # ${why}` : cmd}`;
  }).join('\n')}`;
}
