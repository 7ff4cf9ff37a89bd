// Commands for Tandem's built-in stage programs. They are TypeScript run through tsx's loader,
// resolved to absolute paths so a job can start from any working directory.
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const TSX_LOADER = pathToFileURL(require.resolve('tsx')).href;

export type BuiltinProgram = 'preprocess' | 'train' | 'serve';

export function builtinCommand(program: BuiltinProgram): string[] {
  const script = fileURLToPath(new URL(`./${program}.ts`, import.meta.url));
  return [process.execPath, '--import', TSX_LOADER, script];
}
