// Commands for Tandem's built-in job programs, resolved to absolute paths so a job can start from any
// working directory. From a checkout (this module loaded as .ts) they are TypeScript run through
// tsx's loader; from the published package (compiled to dist/*.js) they are plain JavaScript run by
// node alone, since tsx is only a development dependency there.
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const FROM_SOURCE = import.meta.url.endsWith('.ts');

/** The stage programs, and the lease wrapper `fence` that runs one of them (`<lease> -- <program…>`). */
export type BuiltinProgram = 'preprocess' | 'train' | 'serve' | 'fence';

export function builtinCommand(program: BuiltinProgram): string[] {
  const script = fileURLToPath(new URL(`./${program}${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url));
  return [process.execPath, ...nodeLoaderArgs(), script];
}

/** The node options a script of this checkout needs (tsx's loader) or of the package (none). */
export function nodeLoaderArgs(): string[] {
  if (!FROM_SOURCE) return [];
  // Resolved only here: the installed package has no tsx.
  return ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href];
}
