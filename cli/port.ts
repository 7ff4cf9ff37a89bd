// TCP port options (`tandem dev --port`, `--ui-port`), parsed by commander: `--port abc` used to
// become NaN, and `tandem dev` then waited a minute for "127.0.0.1:NaN". A light module on purpose:
// cli/main.ts imports it at start-up, before any command's own modules.
import { InvalidArgumentError } from 'commander';

export const PORT_RULE = 'a TCP port number from 1 to 65535';

/** commander's argParser: the port, or an InvalidArgumentError that commander prints naming the option. */
export function parsePort(value: string): number {
  const n = /^\d{1,5}$/.test(value.trim()) ? Number(value) : NaN;
  if (!(n >= 1 && n <= 65535)) throw new InvalidArgumentError(`must be ${PORT_RULE}.`);
  return n;
}

/** The same rule for callers other than the CLI (runDev), with the flag named. */
export function checkPort(flag: string, port: number): void {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${flag} ${port} is not ${PORT_RULE}`);
}
