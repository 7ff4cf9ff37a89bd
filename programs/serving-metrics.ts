// Prometheus metrics of the built-in model server, named, typed and bucketed as vLLM's are (vLLM v1,
// vllm/v1/metrics/loggers.py), labelled with model_name, so that dashboards and autoscalers written
// for vLLM read this server too. Requests never queue here (each is generated as it arrives), so
// vllm:num_requests_waiting stays 0 truthfully.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** vLLM's 1-2-5 buckets up to `max` (build_1_2_5_buckets). */
export function buckets125(max: number): number[] {
  const out: number[] = [];
  for (let exp = 0; ; exp++)
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** exp;
      if (v > max) return out;
      out.push(v);
    }
}

const TTFT = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0];
const ITL = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0];
const LATENCY = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0];

export class ServingMetrics {
  readonly registry = new Registry();
  readonly running: Gauge;
  readonly waiting: Gauge;
  readonly promptTokens: Counter;
  readonly generationTokens: Counter;
  readonly success: Counter;
  readonly e2e: Histogram;
  readonly ttft: Histogram;
  readonly itl: Histogram;
  readonly requestPromptTokens: Histogram;
  readonly requestGenerationTokens: Histogram;
  readonly paramsN: Histogram;
  readonly paramsMaxTokens: Histogram;

  constructor(readonly modelName: string, maxModelLen: number) {
    const registers = [this.registry];
    const labelNames = ['model_name'] as const;
    this.running = new Gauge({ name: 'vllm:num_requests_running', help: 'Number of requests in model execution batches.', labelNames, registers });
    this.waiting = new Gauge({ name: 'vllm:num_requests_waiting', help: 'Number of requests waiting to be processed.', labelNames, registers });
    this.promptTokens = new Counter({ name: 'vllm:prompt_tokens_total', help: 'Number of prefill tokens processed.', labelNames, registers });
    this.generationTokens = new Counter({ name: 'vllm:generation_tokens_total', help: 'Number of generation tokens processed.', labelNames, registers });
    this.success = new Counter({ name: 'vllm:request_success_total', help: 'Count of successfully processed requests.', labelNames: ['model_name', 'finished_reason'], registers });
    this.e2e = new Histogram({ name: 'vllm:e2e_request_latency_seconds', help: 'Histogram of e2e request latency in seconds.', buckets: LATENCY, labelNames, registers });
    this.ttft = new Histogram({ name: 'vllm:time_to_first_token_seconds', help: 'Histogram of time to first token in seconds.', buckets: TTFT, labelNames, registers });
    this.itl = new Histogram({ name: 'vllm:inter_token_latency_seconds', help: 'Histogram of inter-token latency in seconds.', buckets: ITL, labelNames, registers });
    const tokenBuckets = buckets125(maxModelLen);
    this.requestPromptTokens = new Histogram({ name: 'vllm:request_prompt_tokens', help: 'Number of prefill tokens processed.', buckets: tokenBuckets, labelNames, registers });
    this.requestGenerationTokens = new Histogram({ name: 'vllm:request_generation_tokens', help: 'Number of generation tokens processed.', buckets: tokenBuckets, labelNames, registers });
    this.paramsN = new Histogram({ name: 'vllm:request_params_n', help: 'Histogram of the n request parameter.', buckets: [1, 2, 5, 10, 20], labelNames, registers });
    this.paramsMaxTokens = new Histogram({ name: 'vllm:request_params_max_tokens', help: 'Histogram of the max_tokens request parameter.', buckets: tokenBuckets, labelNames, registers });
    // Gauges show up (at 0) before the first request, as vLLM's do.
    this.running.set({ model_name: modelName }, 0);
    this.waiting.set({ model_name: modelName }, 0);
  }

  /** Tracks one request from arrival to its last token. */
  request(o: { n: number; maxTokens: number }): RequestTimer {
    const labels = { model_name: this.modelName };
    this.running.inc(labels);
    this.paramsN.observe(labels, o.n);
    this.paramsMaxTokens.observe(labels, o.maxTokens);
    const start = performance.now();
    let last: number | undefined;
    let done = false;
    return {
      token: () => {
        const now = performance.now();
        if (last === undefined) this.ttft.observe(labels, (now - start) / 1000);
        else this.itl.observe(labels, (now - last) / 1000);
        last = now;
      },
      /** A sequence starts: the next token's gap is not an inter-token latency. */
      sequence: () => {
        if (last !== undefined) last = performance.now();
      },
      finish: (r: { promptTokens: number; generationTokens: number; finishReasons: string[] }) => {
        if (done) return;
        done = true;
        this.running.dec(labels);
        this.promptTokens.inc(labels, r.promptTokens);
        this.generationTokens.inc(labels, r.generationTokens);
        this.requestPromptTokens.observe(labels, r.promptTokens);
        this.requestGenerationTokens.observe(labels, r.generationTokens);
        for (const reason of r.finishReasons) this.success.inc({ ...labels, finished_reason: reason });
        this.e2e.observe(labels, (performance.now() - start) / 1000);
      },
      abort: () => {
        if (done) return;
        done = true;
        this.running.dec(labels);
      },
    };
  }
}

export interface RequestTimer {
  token(): void;
  sequence(): void;
  finish(r: { promptTokens: number; generationTokens: number; finishReasons: string[] }): void;
  abort(): void;
}
