// `tandem setup`: the one-time preparation of a namespace for Tandem (its search attributes), done by
// a platform team with admin rights instead of by every launch.
import type { Command } from 'commander';
import type { TandemClient } from '../sdk/client.js';

export function registerSetupCommand(program: Command, connect: () => Promise<TandemClient>): void {
  program
    .command('setup')
    .description("register Tandem's search attributes in the namespace (once per namespace; platform teams)")
    .option('--json', 'print the result as JSON')
    .action(async (o: { json?: boolean }) => {
      const client = await connect();
      try {
        const r = await client.setup();
        if (o.json) return console.log(JSON.stringify(r));
        if (r.registered.length) console.log(`namespace ${r.namespace}: registered ${r.registered.join(', ')} (Keyword)`);
        if (r.present.length) console.log(`namespace ${r.namespace}: already registered ${r.present.join(', ')}`);
      } finally {
        await client.close();
      }
    });
}
