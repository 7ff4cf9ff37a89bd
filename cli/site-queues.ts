// `tandem run --site-queue zurich=tandem-zurich` (repeatable): the pipeline's tuning.siteQueues, so the
// activities that touch a site run on that site's own workers (docs/scaling.md, "A task queue per site").
import { InvalidArgumentError } from 'commander';

/** commander's collector for a repeatable `--site-queue <site=queue>`. */
export function collectSiteQueue(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const m = /^([^=\s]+)=(\S+)$/.exec(value);
  if (!m) throw new InvalidArgumentError(`--site-queue ${JSON.stringify(value)} must look like <site>=<task queue>, e.g. zurich=tandem-zurich`);
  const [, site, queue] = m as unknown as [string, string, string];
  if (Object.hasOwn(previous, site) && previous[site] !== queue) throw new InvalidArgumentError(`--site-queue names site ${site} twice (${previous[site]}, ${queue})`);
  return { ...previous, [site]: queue };
}
