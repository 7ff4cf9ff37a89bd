// Every test file's process gets Temporal's Runtime with ERROR-level logging, both the SDK's logger
// and the Rust core's own log lines, before the file's own code runs, so a passing run prints no
// "Worker state changed" INFO lines or WARN blocks for failures a test provokes on purpose (a suite
// that asserts on logs captures them itself: its own worker process, or a logger it passes).
// Runtime.install may run once per module registry; a file that installs its own first is left as it is.
import { DefaultLogger, makeTelemetryFilterString, Runtime } from '@temporalio/worker';

try {
  Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } } });
} catch {
  /* installed already */
}
