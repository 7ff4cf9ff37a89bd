// OpenTelemetry tracing, opt-in (config/worker.ts reads the standard OTEL_* variables; off by default).
// One tracer provider per process, started by an entry point (workers/main.ts) or by the TandemPlugin
// when its configuration turns tracing on. Spans follow a run across processes through Temporal's own
// OpenTelemetry interceptors (@temporalio/interceptors-opentelemetry), which carry the span context in
// Temporal headers:
//
//   client   StartWorkflow:hybridPipeline            (sdk/client.ts, or the plugin on a team's Client)
//   workflow  └ RunWorkflow:hybridPipeline            (the interceptor module bundled into the workflows;
//               └ StartActivity:placeJob                built for replay: headers only, no commands)
//   worker        └ RunActivity:placeJob             (+ tandem.stage / site / tenant / job_attempt)
//
// Workflow spans leave the sandbox through the `exporter` sink (not called on replay, so a replayed or
// taken-over run does not export its past again). With tracing off nothing here is loaded into a
// worker: the workflow bundle, the interceptors and the histories are what they were.
import { createRequire } from 'node:module';
import { trace, type Attributes, type AttributeValue, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor, OpenTelemetryWorkflowClientInterceptor, makeWorkflowExporter, type OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, ActivityInterceptorsFactory, InjectedSinks, Next } from '@temporalio/worker';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { inputAttributes } from './interceptor.js';
import { setTracingClientInterceptors } from './tracing-active.js';

/** What config/worker.ts resolves from OTEL_* (its TracingConfig). */
export interface TracingOptions {
  /** The OTLP/HTTP traces URL (…/v1/traces); spans are sent as JSON. */
  endpoint: string;
  headers?: Record<string, string>;
  serviceName?: string;
}

export interface Tracing {
  readonly tracer: Tracer;
  readonly serviceName: string;
  /** Exports every span not yet sent (the batch processor sends every few seconds otherwise). */
  flush(): Promise<void>;
  /** Flushes and stops; the process's tracing is then off. */
  shutdown(): Promise<void>;
  /** @internal the batch processor the workflow span sink feeds. */
  readonly processor: SpanProcessor;
  /** @internal */
  readonly resource: Resource;
}

/** The module bundled into the workflows when tracing is on (workers/worker.ts bundleWorkflows, the plugin). */
export const TRACING_WORKFLOW_MODULE = createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

let active: Tracing | undefined;

/** The process's tracing, if an entry point or the plugin started it. */
export const activeTracing = (): Tracing | undefined => active;

/**
 * Starts the process's tracer provider (once: a second call returns the first, whatever its options)
 * and registers the W3C trace-context propagator and an AsyncLocalStorage context manager globally,
 * which Temporal's interceptors use to carry the context. An embedding that registered its own
 * globals first keeps them; Tandem's spans still go through its own provider.
 */
export function startTracing(o: TracingOptions, defaultServiceName: string): Tracing {
  if (active) return active;
  const serviceName = o.serviceName ?? defaultServiceName;
  const resource = Resource.default().merge(new Resource({ [ATTR_SERVICE_NAME]: serviceName }));
  // url and headers given explicitly: the exporter would otherwise read OTEL_* itself, and
  // config/worker.ts is the one reader of the environment.
  const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: o.endpoint, headers: { ...o.headers } }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  provider.register({
    contextManager: new AsyncLocalStorageContextManager(),
    propagator: new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  });
  const t: Tracing = {
    tracer: provider.getTracer('tandem'),
    serviceName,
    processor,
    resource,
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      if (active === t) {
        active = undefined;
        setTracingClientInterceptors(undefined);
      }
      await provider.shutdown();
    },
  };
  active = t;
  setTracingClientInterceptors(() => tracingClientInterceptors(t));
  return t;
}

/** StartWorkflow / SignalWorkflow / QueryWorkflow … spans on a client, parents of the run's spans. */
export function tracingClientInterceptors(t: Tracing | undefined = active): WorkflowClientInterceptor[] {
  return t ? [new OpenTelemetryWorkflowClientInterceptor({ tracer: t.tracer })] : [];
}

/** RunActivity spans, children of the workflow's StartActivity span; activity log lines get trace_id/span_id. */
export function tracingActivityInterceptors(t: Tracing): ActivityInterceptorsFactory {
  return (ctx) => ({ inbound: new TandemActivitySpan(ctx, { tracer: t.tracer }), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) });
}

/** The worker end of the workflow interceptors' span sink. */
export function tracingSinks(t: Tracing): InjectedSinks<OpenTelemetrySinks> {
  return { exporter: makeWorkflowExporter(new WorkflowSpanAttributes(t.processor), t.resource) };
}

/** Temporal's RunActivity span, plus what Tandem knows about the activity from its input. */
class TandemActivitySpan extends OpenTelemetryActivityInboundInterceptor {
  override execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    return super.execute(input, (i) => {
      // Inside the span's context: the active span is the RunActivity span just started.
      trace.getActiveSpan()?.setAttributes(activitySpanAttributes(i.args));
      return next(i);
    });
  }
}

/** tandem.stage, tandem.site, tandem.job_attempt (from the input, observe/interceptor.ts) and tandem.tenant. Exported for the unit test. */
export function activitySpanAttributes(args: unknown[]): Attributes {
  const out: Attributes = {};
  const a = inputAttributes(args);
  if (typeof a.stage === 'string') out['tandem.stage'] = a.stage;
  if (typeof a.site === 'string') out['tandem.site'] = a.site;
  if (typeof a.jobAttempt === 'number') out['tandem.job_attempt'] = a.jobAttempt;
  const i = args[0] as { tenant?: unknown; job?: { tenant?: unknown } } | undefined;
  const tenant = typeof i?.tenant === 'string' ? i.tenant : typeof i?.job?.tenant === 'string' ? i.job.tenant : undefined;
  if (tenant) out['tandem.tenant'] = tenant;
  return out;
}

/**
 * Temporal's sink copies the whole WorkflowInfo onto each workflow span's attributes, memo and search
 * attributes included: a memo is encrypted at rest when the payload codec is on, and must not leave in
 * clear through a trace. Only scalar attributes (ids, type, task queue, attempt, …) are kept.
 */
class WorkflowSpanAttributes implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    const attrs = span.attributes as Record<string, unknown>;
    for (const [k, v] of Object.entries(attrs)) if (!isAttributeValue(v)) delete attrs[k];
    this.next.onEnd(span);
  }
  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }
  /** The provider owns the processor and shuts it down. */
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const scalar = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
const isAttributeValue = (v: unknown): v is AttributeValue => scalar(v) || (Array.isArray(v) && v.every((x) => x == null || scalar(x)));
