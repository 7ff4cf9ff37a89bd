// The benchmark's gateway, in its own process so that the worker's RSS is measured alone: the test
// gateway (spec-validated, JWT-checked) over a system whose jobs are simulated in memory.
import { FirecrestGateway } from '../../test/slurm/gateway/server.js';
import { SimulatedExecutor } from '../../test/slurm/gateway/executor.js';

const durationMs = Number(process.env.BENCH_JOB_MS ?? 60_000);
const gateway = new FirecrestGateway({
  systems: [new SimulatedExecutor('sim', durationMs, 1000)],
  tokens: { clientId: 'bench', clientSecret: 'bench-secret', lifetimeS: 300, minRemainingS: 30 },
});
const { baseUrl, tokenUrl } = await gateway.listen();
process.stdout.write(JSON.stringify({ baseUrl, tokenUrl }) + '\n');
process.on('message', (m) => {
  if (m === 'stats') process.send!({ stats: gateway.stats, violations: gateway.violations.length });
});
