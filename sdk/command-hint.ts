// Commands named in hints and errors, spelled as the user types them where they are: `npx tandem …`
// from the installed package (this module compiled, under dist/), `npm run tandem -- …` and
// `npm run worker` in a checkout (the TypeScript sources run through tsx).
const inPackage = !import.meta.url.endsWith('.ts');

/** `tandem <args>` as typed here, e.g. tandemCommand('dev'). */
export const tandemCommand = (args: string): string => (inPackage ? `npx tandem ${args}` : `npm run tandem -- ${args}`);

/** The long-lived worker's command as typed here. */
export const workerCommand = (): string => (inPackage ? 'npx tandem worker' : 'npm run worker');
