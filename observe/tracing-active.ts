// Which client interceptors the process's tracing wants, without loading the OpenTelemetry SDK: the
// SDK's client (sdk/client.ts, the package's light `tandem/sdk` entry) asks here, and only a process
// that started tracing (observe/tracing.ts) has loaded the SDK and registered its interceptors.
import type { WorkflowClientInterceptor } from '@temporalio/client';

let interceptors: (() => WorkflowClientInterceptor[]) | undefined;

/** Set by observe/tracing.ts when tracing starts (a function) and stops (undefined). */
export function setTracingClientInterceptors(f: (() => WorkflowClientInterceptor[]) | undefined): void {
  interceptors = f;
}

/** The StartWorkflow/Signal/Query span interceptors when this process traces; none otherwise. */
export const tracingClientInterceptors = (): WorkflowClientInterceptor[] => interceptors?.() ?? [];
