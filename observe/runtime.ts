// What an entry point passes to Temporal's Runtime.install (once per process: workers/main.ts,
// `tandem dev`/`demo`; never library code): Tandem's logger as the Runtime logger with Core's own
// logs forwarded into it, and optionally the SDK's metrics on Core's Prometheus exporter.
//
// The SDK's metrics keep Core's default names and units (temporal_* , histograms in milliseconds)
// so that Temporal's official dashboards (github.com/temporalio/dashboards, sdk/) work on them as
// they are; Tandem's own metrics (observe/metrics.ts) are on the other endpoint.
import { makeTelemetryFilterString, type RuntimeOptions } from '@temporalio/worker';
import type { LogLevel } from '@temporalio/common';
import type { TandemLogger } from './log.js';

export interface RuntimeSetup {
  logger: TandemLogger;
  /** Core's level for its own (forwarded) logs; default WARN, they are chatty. */
  coreLevel?: LogLevel;
  /** host:port of the SDK's Prometheus exporter; undefined: no SDK metrics. */
  sdkMetrics?: string;
}

export function runtimeOptions(o: RuntimeSetup): RuntimeOptions {
  return {
    logger: o.logger,
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: o.coreLevel ?? 'WARN' }), forward: {} },
      ...(o.sdkMetrics ? { metrics: { prometheus: { bindAddress: o.sdkMetrics } } } : {}),
    },
  };
}

/** host:port for a bind address, IPv6 literals bracketed. */
export const bindAddress = (host: string, port: number) => `${host.includes(':') ? `[${host}]` : host}:${port}`;
