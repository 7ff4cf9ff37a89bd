import { rmSync } from 'node:fs';

export default async function globalTeardown() {
  await globalThis.__tandemServer?.stop();
  if (process.env.TANDEM_TEST_DIR && !process.env.TANDEM_KEEP_TEST_DIR) rmSync(process.env.TANDEM_TEST_DIR, { recursive: true, force: true });
}
