// The planning self-tuning order (PolicyConfig.dynp, placement/dynp.ts): each candidate order's
// conservative plan of the queue on a free-capacity profile, and a pass run with the best one.
import { ClusterState, policy, schedule, type JobRequest } from '../../../placement/index.js';
import { chooseOrder, planScore } from '../../../placement/dynp.js';
import { cpuNode, inventory, job } from '../../placement/fixtures.js';

const off = { quotas: false, fairShare: false, qos: false, preemption: false, oversubscription: false, deadlines: false, cost: false, thermal: false };
const cpu = (id: string, count: number, walltime: number, over: Partial<JobRequest> = {}) => job({ id, type: 'hpc-mpi', count, walltime, per: { cpus: 1, gpus: 0, memoryMB: 0 }, ...over });
const pol = policy({ ...off, order: 'fcfs', backfill: 'easy' });

/** Four 1-CPU nodes, two of them busy until t = 100; waiting: a wide long job and a narrow one. */
function bed(): { s: ClusterState; queue: JobRequest[] } {
  const s = new ClusterState(inventory(Array.from({ length: 4 }, (_, i) => cpuNode(`c${i}`))));
  const r = cpu('running', 2, 100);
  s.allocate(r, [0, 1], [1, 1], 0);
  return { s, queue: [cpu('wide', 4, 1000), cpu('narrow', 1, 200, { submit: 1 })] };
}

describe('planScore', () => {
  test('plans each job at the earliest slot its request fits, in the given order', () => {
    const { s, queue } = bed();
    // FCFS: wide at 100 (all four nodes until 1,100), narrow after it (its 200 s do not fit before 100).
    const fcfs = planScore(s, queue, 0, pol, 'fcfs');
    expect(fcfs.maxWait).toBe(1099);
    expect(fcfs.bsld).toBeCloseTo(((100 + 1000) / 1000 + (1099 + 200) / 200) / 2, 9);
    // SJF: narrow now on a free node, wide once both the running job and narrow are gone (t = 200).
    const sjf = planScore(s, queue, 0, pol, 'sjf');
    expect(sjf.maxWait).toBe(200);
    expect(sjf.bsld).toBeCloseTo(((200 + 1000) / 1000 + 1) / 2, 9);
    // Planning books nothing on the state.
    expect(s.running.size).toBe(1);
    expect(s.freeCpu).toBe(2);
  });

  test('a job wider than the machine is left out of the plan rather than waited for', () => {
    const { s, queue } = bed();
    const r = planScore(s, [...queue, cpu('huge', 5, 10)], 0, pol, 'fcfs');
    expect(r.maxWait).toBe(1099);
  });
});

describe('chooseOrder and schedule with dynp', () => {
  test('the candidate with the lowest planned bsld wins, whatever its place in the list', () => {
    const { s, queue } = bed();
    expect(chooseOrder(s, queue, 0, pol, ['fcfs', 'sjf'])).toBe('sjf');
    expect(chooseOrder(s, queue, 0, pol, ['sjf', 'fcfs'])).toBe('sjf');
  });

  test('ties and a queue of one keep the first candidate', () => {
    const { s, queue } = bed();
    expect(chooseOrder(s, [queue[1]], 0, pol, ['fcfs', 'sjf'])).toBe('fcfs');
    // SAF and SJF give the same plan here (the narrow job first under both).
    expect(chooseOrder(s, queue, 0, pol, ['saf', 'sjf'])).toBe('saf');
  });

  test('a pass runs with the chosen order: the narrow job starts now, as SJF starts it and FCFS + EASY does not', () => {
    const fcfs = bed();
    const a = schedule(fcfs.s, fcfs.queue, 0, pol);
    expect(a.filter((d) => d.kind === 'start')).toEqual([]);
    const dyn = bed();
    const b = schedule(dyn.s, dyn.queue, 0, { ...pol, dynp: ['fcfs', 'sjf'] });
    expect(b.filter((d) => d.kind === 'start').map((d) => d.jobId)).toEqual(['narrow']);
    expect(b.find((d) => d.kind === 'reserve')).toMatchObject({ jobId: 'wide', at: 200 });
  });
});
