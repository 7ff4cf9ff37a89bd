// `tandem codec-server`: the remote codec the Temporal Web UI (Settings → Codec Server, or
// `temporal server start-dev --ui-codec-endpoint`) and `temporal … --codec-endpoint` call to show
// decrypted payloads. Keys: TANDEM_CODEC_KEYS_FILE / TANDEM_CODEC_KEY (the workers' keys); origins:
// TANDEM_CODEC_SERVER_ORIGINS; bearer token: TANDEM_CODEC_SERVER_TOKEN (config/worker.ts).
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
    .action(async (o: { port: number; origin?: string }) => {
      const { loadCodecServerConfig } = await import('../config/worker.js');
      const { AesGcmCodec } = await import('../codec/index.js');
      const { startCodecServer } = await import('../codec/server.js');
      // A flag wins over its variable; both are checked by the configuration loader.
      const cfg = loadCodecServerConfig(o.origin === undefined ? process.env : { ...process.env, TANDEM_CODEC_SERVER_ORIGINS: o.origin });
      const codec = new AesGcmCodec(cfg.keys!);
      const server = await startCodecServer({ codec, origins: cfg.origins, token: cfg.token, port: o.port });
      console.log(`tandem: codec server on ${server.url} (encrypts with key ${codec.keyId}; decrypts ${cfg.keys!.keys.length} key(s); origins ${cfg.origins.join(', ')}; bearer auth ${cfg.token ? 'on' : 'off'})`);
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await server.close();
    });
}
