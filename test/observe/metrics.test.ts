// The worker's /metrics during a real pipeline (real Temporal dev server, local runtime: real
// processes, checkpoints and model server): counters and histograms move as the run does.
import { startMetricsServer, type MetricsServer } from '../../observe/server.js';
import { spec, startWorker, tempDir, uniqueQueue, waitFor } from '../helpers.js';
import { scrape, total } from './scrape.js';

describe('metrics endpoint', () => {
  let server: MetricsServer;
  beforeAll(async () => {
    server = await startMetricsServer({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => server.close());

  test('answers only GET /metrics', async () => {
    expect((await fetch(server.url.replace('/metrics', '/'))).status).toBe(404);
    expect((await fetch(server.url, { method: 'POST' })).status).toBe(404);
    const res = await fetch(server.url);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await res.text()).toContain('# HELP tandem_pipelines_started_total');
  });

  test('a pipeline run moves the counters and histograms', async () => {
    const tenant = 'metrics-tenant';
    const pipeline = uniqueQueue('metrics');
    const labels = { tenant, pipeline };
    const w = await startWorker({ taskQueue: uniqueQueue('observe'), home: tempDir('observe') });
    try {
      const before = await scrape(server.url);
      expect(total(before, 'tandem_pipelines_started_total', labels)).toBe(0);
      // Slow enough training that the run is seen running before it completes.
      const h = await w.tandem.launch(spec({ name: pipeline, tenant, stages: { train: { steps: 80, checkpointEvery: 20, stepDelayMs: 150 } } }), { tuning: { pollMaxMs: 300 } });
      // Running now: the run in flight, in its train stage, its training step and loss as gauges labelled
      // by tenant, pipeline, stage and site — never the run's id.
      const training = await waitFor('the training gauges of the running job', async () => {
        const s = await scrape(server.url);
        return total(s, 'tandem_training_step', { ...labels, stage: 'train' }) > 0 ? s : undefined;
      });
      // The stage gauges come from visibility, which catches up with the run's TandemStage after the
      // activity's own training gauges: both are read from one scrape once visibility has it.
      const inTrain = await waitFor('visibility to count the run in flight in its train stage', async () => {
        const s = await scrape(server.url);
        return total(s, 'tandem_stages_running', { stage: 'train' }) === 1 && total(s, 'tandem_pipelines', { status: 'Running' }) === 1 ? s : undefined;
      });
      expect(total(training, 'tandem_training_steps', { ...labels, stage: 'train', site: 'local' })).toBe(80);
      expect(total(training, 'tandem_training_loss', { ...labels, stage: 'train' })).toBeGreaterThan(0);
      expect(total(inTrain, 'tandem_stages_running', { stage: 'preprocess' })).toBe(0);
      const running = await waitFor('pipelines_started to count the run', async () => {
        const s = await scrape(server.url);
        return total(s, 'tandem_pipelines_started_total', labels) === 1 ? s : undefined;
      });
      expect(total(running, 'tandem_pipelines_completed_total', labels)).toBe(0);
      await h.result();
      // Training was watched to its end: its step and loss series went with it.
      const ended = await scrape(server.url);
      expect(total(ended, 'tandem_training_step', labels)).toBe(0);
      expect([...ended.keys()].some((k) => k.startsWith('tandem_training_') && k.includes(`pipeline="${pipeline}"`))).toBe(false);
      const after = await waitFor('pipelines_completed to count the run', async () => {
        const s = await scrape(server.url);
        return total(s, 'tandem_pipelines_completed_total', labels) === 1 ? s : undefined;
      });
      const moved = (name: string, match: Record<string, string> = {}) => total(after, name, match) - total(before, name, match);
      expect(total(after, 'tandem_pipelines_started_total', labels)).toBe(1);
      expect(total(after, 'tandem_pipelines_failed_total', labels)).toBe(0);
      // Visibility catches up with the close: none in flight on this queue, one completed.
      await waitFor('the run counted completed by visibility', async () => {
        const s = await scrape(server.url);
        return total(s, 'tandem_pipelines', { status: 'Completed' }) === 1 && total(s, 'tandem_pipelines', { status: 'Running' }) === 0 ? s : undefined;
      });
      // One stage duration per stage, each completed; the train stage took at least its 80 × 150 ms.
      for (const stage of ['preprocess', 'train', 'checkpoint', 'deploy']) expect(moved('tandem_stage_duration_seconds_count', { stage, outcome: 'completed' })).toBe(1);
      expect(moved('tandem_stage_duration_seconds_sum', { stage: 'train' })).toBeGreaterThanOrEqual(3);
      expect(moved('tandem_stage_duration_seconds_bucket', { stage: 'train', le: '1' })).toBe(0);
      // The local jobs were watched from submission to COMPLETED, each queue wait once.
      for (const stage of ['preprocess', 'train']) {
        expect(moved('tandem_job_transitions_total', { stage, runtime: 'local', to: 'COMPLETED' })).toBe(1);
        expect(moved('tandem_job_transitions_total', { stage, from: 'SUBMITTED' })).toBe(1);
        expect(moved('tandem_stage_queue_wait_seconds_count', { stage, runtime: 'local' })).toBe(1);
      }
      // runtime auto: both job stages were placed; the model passed its three readiness gates.
      expect(moved('tandem_placement_decisions_total', { outcome: 'start' })).toBe(2);
      expect(moved('tandem_placement_decision_seconds_count')).toBe(2);
      for (const gate of ['health', 'models', 'completion']) expect(moved('tandem_gate_results_total', { gate, result: 'passed' })).toBe(1);
      expect(moved('tandem_deployment_revisions_total', { runtime: 'local', action: 'rollout' })).toBe(1);
      expect(moved('tandem_checkpoint_size_bytes_count')).toBe(1);
      expect(moved('tandem_checkpoint_size_bytes_sum')).toBeGreaterThan(0);
      // The activity interceptor timed every activity: two submissions, two watches.
      expect(moved('tandem_activity_duration_seconds_count', { activity: 'submitJob', outcome: 'completed' })).toBe(2);
      expect(moved('tandem_activity_duration_seconds_count', { activity: 'awaitJob', outcome: 'completed' })).toBe(2);
      // No label carries the run's workflow id.
      expect([...after.keys()].some((k) => k.includes(h.id))).toBe(false);
    } finally {
      await w.stop();
    }
  }, 240_000);
});
