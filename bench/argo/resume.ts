// Resuming an Argo run's suspended nodes the way the conformance and oracle benches both do: a node
// whose `supplied` outputs have no default is resumed with a value for each (Argo refuses to resume it
// without one, as `argo resume` does; its e2e suite sets them with `argo node set`).
import type { ArgoClient } from '../../argo/client.js';

/** The value the benches supply for a suspended node's raw output parameters. */
export const SUPPLIED = 'supplied-by-conformance';

/** Resumes every Running Suspend node of run `id`, supplying each output it asks for. */
export async function resumeSuspended(client: ArgoClient, id: string): Promise<void> {
  for (const n of Object.values((await client.status(id)).nodes)) {
    if (n.type !== 'Suspend' || n.phase !== 'Running') continue;
    const supplied: Record<string, string> = {};
    for (;;) {
      try {
        await client.resume(id, n.name, Object.keys(supplied).length ? supplied : undefined);
        break;
      } catch (e) {
        const missing = /raw output parameter '([^']+)'/.exec((e as Error).message)?.[1];
        if (!missing || missing in supplied) throw e;
        supplied[missing] = SUPPLIED;
      }
    }
  }
}
