// How a command reaches Temporal: handed by cli/main.ts to the command groups (cli/groups.ts) and by
// them to each group's module. Its own module so that a group's module (doctor, ui) and the registry
// that imports it never import each other.
import type { TandemClient } from '../sdk/client.js';
import type { ArgoClient } from '../argo/client.js';
import type { ClientConfig } from '../config/worker.js';

export interface Connectors {
  connect: () => Promise<TandemClient>;
  connectArgo: () => Promise<ArgoClient>;
  /** Where `connect` goes (address, namespace, TLS, API key; flags, profile and variables resolved). */
  target?: () => ClientConfig & { profile?: string };
}
