// `tandem ui`: serve Tandem's read-only web view (ui/server.ts) until Ctrl-C. Light at import: the
// server and the clients load when the command runs.
import { randomBytes } from 'node:crypto';
import { readInput, readProblem, TOKEN_FILE_BYTES } from '../config/input-file.js';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { DEFAULTS } from '../config/defaults.js';
import { InputError } from '../contract/input-error.js';
import { parsePort } from './port.js';
import type { Connectors } from './connectors.js';
import { examples } from './help.js';

/** The token the server requires: the first line of --token-file (an error names the file and why). */
function tokenLine(file: string): string {
  try {
    return readInput(file, TOKEN_FILE_BYTES).toString('utf8').split('\n')[0]!.trim();
  } catch (e) {
    throw new InputError('option', [{ path: '--token-file', message: `${file}: ${readProblem(e)}` }]);
  }
}

export function registerUiCommand(program: Command, c: Connectors): void {
  program
    .command('ui')
    .description("serve Tandem's read-only web view: runs, timelines, loss curves, Argo graphs (loopback only by default)")
    .option('--port <port>', 'port to listen on (0 picks a free one)', (v: string) => (v === '0' ? 0 : parsePort(v)), DEFAULTS.uiPort)
    .option('--host <address>', 'address to bind', '127.0.0.1')
    .option('--home <dir>', "the workers' TANDEM_HOME, for checkpoints, training output and pod logs (default: $TANDEM_HOME, or .tandem)")
    .option('--token-file <file>', 'require this bearer token (first line of the file) on every request (default: a new random token, printed in the URL)')
    .option('--no-auth', 'no token (loopback only: anyone on this machine can then read the runs)')
    .option('--temporal-ui <url>', 'link each run to the Temporal Web UI at this address (e.g. http://127.0.0.1:8233)')
    .addHelpText('after', examples('tandem ui  # http://127.0.0.1:8234, its token printed', 'tandem ui --port 0 --temporal-ui http://127.0.0.1:8233'))
    .action(async (o: { port: number; host: string; home?: string; tokenFile?: string; temporalUi?: string; auth: boolean }) => {
      const loopback = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/.test(o.host);
      if (!o.auth && !loopback) throw new InputError('option', [{ path: '--no-auth', message: `only with a loopback --host, not ${o.host}` }]);
      if (!o.auth && o.tokenFile) throw new InputError('option', [{ path: '--no-auth', message: 'and --token-file contradict each other' }]);
      const fromFile = o.tokenFile ? tokenLine(o.tokenFile) : undefined;
      if (o.tokenFile && !fromFile) throw new InputError('option', [{ path: '--token-file', message: `${o.tokenFile} is empty` }]);
      // Authenticated by default: a token made up for this run, handed over in the printed URL.
      const token = o.auth ? (fromFile ?? randomBytes(24).toString('base64url')) : undefined;
      const { loadCliConfig } = await import('../config/worker.js');
      const home = o.home ? resolve(o.home) : loadCliConfig().home;
      const [tandem, argo, { startUiServer }] = await Promise.all([c.connect(), c.connectArgo(), import('../ui/server.js')]);
      // Job output as `tandem logs` reads it: local files, Slurm through its backend, Kubernetes pod logs.
      const { sourceFor } = await import('./logs.js');
      const jobOutput = async (j: { stage: string; attempt: number; runtime: string; site: string; jobId: string }) => (await sourceFor(home, { ...j, at: '' })).read();
      const ui = await startUiServer({ tandem, argo, home, host: o.host, port: o.port, token, noAuth: !o.auth, temporalUi: o.temporalUi, jobOutput });
      const open = token && !fromFile ? `${ui.url}/?token=${token}` : ui.url;
      console.log(`tandem ui: ${open}${fromFile ? ' (bearer token of --token-file required)' : token ? '' : ' (no authentication: --no-auth)'} — Ctrl-C stops`);
      await new Promise<void>((done) => {
        const stop = () => void Promise.all([ui.close(), tandem.close(), argo.close()]).then(() => done());
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
