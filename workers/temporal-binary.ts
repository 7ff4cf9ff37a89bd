// Finds the Temporal CLI (which embeds the real server), or builds it from its Go module.
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadToolConfig } from '../config/worker.js';

export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
// A checkout (this file run as TypeScript) keeps its tools in .tools/; the installed package in the
// user's cache directory (config/worker.ts: $XDG_CACHE_HOME/tandem or ~/.cache/tandem), since
// node_modules is replaced by every `npm install`.
const IN_CHECKOUT = import.meta.url.endsWith('.ts');
export const TOOLS_DIR = IN_CHECKOUT ? join(PROJECT_ROOT, '.tools') : join(loadToolConfig().cacheDir, 'bin');

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

function goBin(): string | undefined {
  return onPath('go') ?? (executable('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
}

/** Where a `temporal` binary already is: `temporalCli` (TEMPORAL_CLI), PATH, TOOLS_DIR (.tools/ in a checkout, the user cache in the package), or $(go env GOPATH)/bin. */
export function findTemporal(temporalCli: string | undefined = loadToolConfig().temporalCli): string | undefined {
  const candidates = [temporalCli, onPath('temporal'), join(TOOLS_DIR, 'temporal')];
  const go = goBin();
  if (go) {
    try {
      const gopath = execFileSync(go, ['env', 'GOPATH'], { encoding: 'utf8' }).trim();
      if (gopath) candidates.push(join(gopath.split(delimiter)[0]!, 'bin', 'temporal'));
    } catch {
      /* go is broken; the build step below reports it */
    }
  }
  return candidates.find((c): c is string => !!c && executable(c));
}

/** Finds `temporal`, or builds it into TOOLS_DIR with `go install` (about 3 minutes on 2 cores, once). */
export function ensureTemporal(log: (line: string) => void = (l) => console.error(l)): string {
  const found = findTemporal();
  if (found) return found;
  const go = goBin();
  if (!go) {
    throw new Error(
      'The Temporal CLI (`temporal`) was not found and Go is not installed to build it.\n' +
        `Install Go 1.23+ (https://go.dev/doc/install, or Debian's golang package), or put a \`temporal\` binary on PATH or at ${join(TOOLS_DIR, 'temporal')}.`,
    );
  }
  mkdirSync(TOOLS_DIR, { recursive: true });
  log(`tandem: building the Temporal CLI (go install ${TEMPORAL_CLI_MODULE}); this takes a few minutes once…`);
  const res = spawnSync(go, ['install', TEMPORAL_CLI_MODULE], { env: { ...process.env, GOBIN: TOOLS_DIR }, stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8' });
  const bin = join(TOOLS_DIR, 'temporal');
  if (res.status !== 0 || !existsSync(bin)) {
    throw new Error(`go install ${TEMPORAL_CLI_MODULE} failed (exit ${res.status}):\n${(res.stderr ?? '').trim().split('\n').slice(-20).join('\n')}`);
  }
  log(`tandem: built ${bin}`);
  return bin;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    console.log(ensureTemporal());
  } catch (e) {
    // A ConfigError (a bad TEMPORAL_CLI) or a failed build: the message says what to do.
    console.error((e as Error).message);
    process.exit(1);
  }
}
