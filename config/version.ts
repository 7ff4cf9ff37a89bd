// Tandem's own version, from its package.json: one folder up from config/ in a checkout, two from
// dist/config/ in the published package. The CLI's --version, the build-info metric and the header of
// a prebuilt workflow bundle (workers/prebuilt-bundle.ts) all read it here.
import { readFileSync } from 'node:fs';

let cached: string | undefined;

export function tandemVersion(): string {
  if (cached) return cached;
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      const p = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (p.name === 'tandem' && p.version) return (cached = p.version);
    } catch {
      // not this layout
    }
  }
  return (cached = 'unknown');
}
