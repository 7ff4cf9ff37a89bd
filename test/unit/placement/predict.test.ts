// Run-time prediction (placement/predict.ts: the user's last two completed jobs, EASY++'s correction),
// planning with JobRequest.estimate, and the simulator's self-tuning portfolio (PolicyConfig.portfolio).
import { ClusterState, planned, policy, schedule, type JobRequest } from '../../../placement/index.js';
import { MIN_ESTIMATE, RuntimePredictor } from '../../../placement/predict.js';
import { reserve } from '../../../placement/reserve.js';
import { PORTFOLIO_EVERY, simulate, type SimJob } from '../../../placement/simulate.js';
import { cpuNode, inventory, job } from '../../placement/fixtures.js';

const off = { quotas: false, fairShare: false, qos: false, preemption: false, oversubscription: false, deadlines: false, cost: false, thermal: false, predict: false };
const cluster = (n = 16) => inventory(Array.from({ length: n }, (_, i) => cpuNode(`c${i}`)));
const cpu = (id: string, count: number, walltime: number, over: Partial<JobRequest> = {}) => job({ id, type: 'hpc-mpi', count, walltime, per: { cpus: 1, gpus: 0, memoryMB: 0 }, ...over });

describe('RuntimePredictor', () => {
  test("a user's guess is the request scaled by the accuracy of their last two completed jobs", () => {
    const p = new RuntimePredictor();
    expect(p.estimate({ tenant: 'u', walltime: 3600 })).toBeUndefined();
    p.observe({ tenant: 'u', walltime: 1000 }, 100);
    expect(p.estimate({ tenant: 'u', walltime: 3600 })).toBe(360);
    p.observe({ tenant: 'u', walltime: 1000 }, 300);
    expect(p.estimate({ tenant: 'u', walltime: 3600 })).toBe(720);
    // Only the last two count.
    p.observe({ tenant: 'u', walltime: 1000 }, 500);
    expect(p.estimate({ tenant: 'u', walltime: 3600 })).toBe(1440);
    // Other users are not affected; a run past its request counts as accuracy 1; floor MIN_ESTIMATE.
    expect(p.estimate({ tenant: 'v', walltime: 3600 })).toBeUndefined();
    p.observe({ tenant: 'w', walltime: 100 }, 500);
    expect(p.estimate({ tenant: 'w', walltime: 3600 })).toBe(3600);
    p.observe({ tenant: 'z', walltime: 100_000 }, 0);
    expect(p.estimate({ tenant: 'z', walltime: 50 })).toBe(MIN_ESTIMATE);
  });

  test('exact requests keep the request', () => {
    const p = new RuntimePredictor();
    p.observe({ tenant: 'u', walltime: 600 }, 600);
    p.observe({ tenant: 'u', walltime: 60 }, 60);
    expect(p.estimate({ tenant: 'u', walltime: 1234 })).toBe(1234);
  });

  test('planned(): an estimate counts only below the request', () => {
    expect(planned({ walltime: 100, estimate: 40 })).toBe(40);
    expect(planned({ walltime: 100, estimate: 400 })).toBe(100);
    expect(planned({ walltime: 100 })).toBe(100);
    expect(planned({ walltime: 100, estimate: 0 })).toBe(100);
  });

  test('EASY++: a running job past its guess gets a longer one, and reservations plan with it', () => {
    const inv = cluster(4);
    const s = new ClusterState(inv);
    const pol = policy({ ...off, order: 'fcfs', backfill: 'easy' });
    schedule(s, [cpu('run', 4, 10_000, { estimate: 100 })], 0, pol);
    expect(s.running.get('run')!.estEnd).toBe(100);
    const p = new RuntimePredictor();
    expect(p.correct(s, 50)).toBe(0);
    // At t = 150 it still runs: the guess doubles (200 s), not to the request at once.
    expect(p.correct(s, 150)).toBe(1);
    expect(s.running.get('run')!.estEnd).toBe(200);
    expect(reserve(s, cpu('next', 4, 100), 150, pol, [])!.at).toBe(200);
    // At least to now + MIN_ESTIMATE, never past the request.
    p.correct(s, 9_000);
    expect(s.running.get('run')!.estEnd).toBe(9_000 + MIN_ESTIMATE);
    p.correct(s, 9_500);
    expect(s.running.get('run')!.estEnd).toBe(10_000);
    expect(p.correct(s, 10_500)).toBe(0);
    expect(p.corrections).toBe(3);
  });

  test('backfill plans with the estimate: a job whose request would delay the reservation starts when its guess does not', () => {
    const pol = policy({ ...off, order: 'fcfs', backfill: 'easy', backfillExtraNodes: false });
    const queue = (est?: number) => [cpu('head', 4, 100, { submit: 0 }), cpu('small', 2, 1000, { submit: 1, ...(est !== undefined && { estimate: est }) })];
    const run = (est?: number) => {
      const s = new ClusterState(cluster(4));
      schedule(s, [cpu('run', 2, 50)], 0, pol);
      return schedule(s, queue(est), 0, pol).find((d) => d.jobId === 'small')?.kind;
    };
    expect(run()).not.toBe('start');
    expect(run(40)).toBe('start');
  });
});

describe('portfolio (PolicyConfig.portfolio)', () => {
  // Waves on one 16-CPU machine: a half-width job runs, a full-width one queues behind it, then narrow
  // jobs that ask for longer than the first has left: FCFS keeps them behind the full-width job (they
  // cannot backfill without delaying it), SJF runs them first on the free half.
  const stream = (): SimJob[] => {
    const out: SimJob[] = [];
    let t = 0;
    for (let w = 0; w < 12; w++) {
      out.push({ req: cpu(`h${w}`, 8, 300, { submit: t, tenant: 'u' }), run: 300 });
      out.push({ req: cpu(`w${w}`, 16, 2000, { submit: t + 1, tenant: 'u' }), run: 1800 });
      for (let k = 0; k < 30; k++) out.push({ req: cpu(`s${w}-${k}`, 2, 400, { submit: t + 2 + k, tenant: 'u' }), run: 90 });
      t += 3000;
    }
    return out;
  };

  test('a portfolio of one candidate schedules exactly as that order', () => {
    const jobs = stream();
    const one = simulate(cluster(), jobs, policy({ ...off, order: 'score', backfill: 'easy', portfolio: [{ order: 'fcfs' }] }));
    const fcfs = simulate(cluster(), jobs, policy({ ...off, order: 'fcfs', backfill: 'easy' }));
    expect(one.avgBsld).toBe(fcfs.avgBsld);
    expect(one.portfolio![0].chosen).toBe(Math.floor(jobs.length / PORTFOLIO_EVERY));
  });

  test('it leaves a candidate that does badly on the replayed jobs for one that does better', () => {
    const jobs = stream();
    const fcfs = simulate(cluster(), jobs, policy({ ...off, order: 'fcfs', backfill: 'easy' }));
    const sjf = simulate(cluster(), jobs, policy({ ...off, order: 'sjf', backfill: 'easy' }));
    expect(sjf.avgBsld).toBeLessThan(fcfs.avgBsld / 2);
    const p = simulate(cluster(), jobs, policy({ ...off, order: 'fcfs', backfill: 'easy', portfolio: [{ order: 'fcfs' }, { order: 'sjf' }] }));
    expect(p.portfolio!.map((x) => x.chosen)).toEqual([0, Math.floor(jobs.length / PORTFOLIO_EVERY)]);
    expect(p.avgBsld).toBeLessThan(fcfs.avgBsld);
  });
});
