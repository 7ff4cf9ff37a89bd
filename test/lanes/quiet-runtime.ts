// Every test file's process gets Temporal's Runtime with an ERROR-level logger before the file's own
// code runs, so a passing run prints no "Worker state changed" INFO lines or WARN blocks for
// failures a test provokes on purpose (a suite that asserts on logs captures them itself: its own
// worker process, or a logger it passes). Runtime.install may run once per module registry; a file
// that installs its own first is left as it is.
import { DefaultLogger, Runtime } from '@temporalio/worker';

try {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
} catch {
  /* installed already */
}
