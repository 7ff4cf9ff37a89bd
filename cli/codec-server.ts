// `tandem codec-server`: the remote codec the Temporal Web UI (Settings → Codec Server, or
// `temporal server start-dev --ui-codec-endpoint`) and `temporal … --codec-endpoint` call to show
// decrypted payloads. Keys: TANDEM_CODEC_KEYS_FILE / TANDEM_CODEC_KEY (the workers' keys); origins:
// TANDEM_CODEC_SERVER_ORIGINS; who may call it: TANDEM_CODEC_SERVER_TOKEN (the operator) and/or
// TANDEM_CODEC_SERVER_OIDC_* with TANDEM_CODEC_SERVER_TENANT_KEYS (the Web UI's forwarded access token),
// or --no-auth on loopback (config/worker.ts, docs/security.md).
import type { Command } from 'commander';
import { parsePort } from './port.js';

export const CODEC_SERVER_SUMMARY = 'serve decryption of encrypted payloads to the Temporal Web UI and CLI (operators)';
export const DEFAULT_CODEC_SERVER_PORT = 8888;

export async function registerCodecServerCommand(program: Command): Promise<void> {
  program
    .command('codec-server')
    .description(CODEC_SERVER_SUMMARY)
    .option('--port <port>', 'port on 127.0.0.1', parsePort, DEFAULT_CODEC_SERVER_PORT)
    .option('--origin <origins>', 'comma-separated origins the Web UI is served from (env: TANDEM_CODEC_SERVER_ORIGINS; default http://localhost:8233,http://127.0.0.1:8233)')
    .option('--no-auth', 'serve without authentication (loopback only; anyone on this machine can then decrypt)')
    .action(async (o: { port: number; origin?: string; auth: boolean }) => {
      const { loadCodecServerConfig } = await import('../config/worker.js');
      const { startCodecServer } = await import('../codec/server.js');
      // A flag wins over its variable; both are checked by the configuration loader.
      const cfg = loadCodecServerConfig(o.origin === undefined ? process.env : { ...process.env, TANDEM_CODEC_SERVER_ORIGINS: o.origin }, { noAuth: !o.auth });
      const server = await startCodecServer({ keys: cfg.keys!, origins: cfg.origins, auth: { token: cfg.token, oidc: cfg.oidc, none: cfg.none }, hosts: cfg.hosts, port: o.port });
      const auth = [cfg.token && 'operator token', cfg.oidc && `OIDC tokens of ${cfg.oidc.issuer} (claim ${cfg.oidc.claim}; ${Object.keys(cfg.oidc.tenantKeys).length} tenant(s))`, cfg.none && 'NONE (--no-auth, loopback only)'].filter(Boolean).join(' or ');
      console.log(`tandem: codec server on ${server.url} (encrypts with key ${cfg.keys!.keys.at(-1)!.id}; decrypts ${cfg.keys!.keys.length} key(s); origins ${cfg.origins.join(', ')}; auth: ${auth})`);
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await server.close();
    });
}
