// The package's `tandem/observe`: Tandem's prom-client registry (every tandem_* series a worker or a
// TandemPlugin worker records) for an embedding that already serves a Prometheus endpoint
// (`registry.metrics()`, or merge it with `Registry.merge`), the /metrics server the worker and the
// plugin start, and the Runtime options `tandem worker` installs (Tandem's logger, the SDK's metrics).
export { registry, metrics, metricNames, type TandemMetrics } from './metrics.js';
export { startMetricsServer, type MetricsServer } from './server.js';
export { runtimeOptions, bindAddress, type RuntimeSetup } from './runtime.js';
export { configureLogger, TandemLogger, type LoggerOptions, type LogFormat } from './log.js';
