// Tracing's configuration (config/worker.ts, the OTEL_* variables) and the attributes Tandem puts on
// activity spans (observe/tracing.ts). The end-to-end test with a collector is test/tracing.long.test.ts.
import { randomBytes } from 'node:crypto';
import { loadObserveConfig, secretValues } from '../../../config/worker.js';
import { activitySpanAttributes } from '../../../observe/tracing.js';

describe('tracing', () => {
  const canary = `otlp-canary-${randomBytes(6).toString('hex')}`;

  test('config: off unless an OTEL_* variable turns it on; the endpoint and headers as the spec says', () => {
    expect(loadObserveConfig({}).tracing).toBeUndefined();
    expect(loadObserveConfig({ OTEL_SERVICE_NAME: 'x' }).tracing).toBeUndefined();
    expect(loadObserveConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/', OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeUndefined();
    expect(loadObserveConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'TRUE' }).tracing).toBeUndefined();
    expect(loadObserveConfig({ OTEL_TRACES_EXPORTER: 'otlp' }).tracing).toEqual({ endpoint: 'http://localhost:4318/v1/traces', headers: {}, serviceName: undefined });
    expect(loadObserveConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/', OTEL_EXPORTER_OTLP_HEADERS: 'a=1,authorization=Bearer%20x', OTEL_SERVICE_NAME: 'svc' }).tracing).toEqual({ endpoint: 'http://127.0.0.1:4318/v1/traces', headers: { a: '1', authorization: 'Bearer x' }, serviceName: 'svc' });
    expect(loadObserveConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/custom', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).tracing?.endpoint).toBe('http://127.0.0.1:9/custom');
    expect(() => loadObserveConfig({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/OTEL_TRACES_EXPORTER.*must be otlp or none/s);
    expect(() => loadObserveConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_TRACES_EXPORTER: 'otlp' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL.*must be http\/json/s);
    // A malformed headers variable is named, its value (a collector's API key) is not printed.
    let message = '';
    try {
      loadObserveConfig({ OTEL_EXPORTER_OTLP_HEADERS: `${canary}` });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/OTEL_EXPORTER_OTLP_HEADERS/);
    expect(message).not.toContain(canary);
  });

  test('header values are secrets, each on its own, a bearer token also without its scheme; short ones are not', () => {
    const env = { OTEL_EXPORTER_OTLP_HEADERS: `x-team=tandem,authorization=Bearer%20${canary}`, OTEL_EXPORTER_OTLP_TRACES_HEADERS: `x-api-key=${canary}-2` };
    const secrets = secretValues(env);
    expect(secrets).toEqual(expect.arrayContaining([env.OTEL_EXPORTER_OTLP_HEADERS, env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, `Bearer ${canary}`, canary, `${canary}-2`]));
    expect(secrets).not.toContain('tandem');
  });

  test("activity span attributes come from the activity's input", () => {
    expect(activitySpanAttributes([{ stage: 'train', site: 'zurich', name: 'tandem-run-1-abc-train-2' }])).toEqual({ 'tandem.stage': 'train', 'tandem.site': 'zurich', 'tandem.job_attempt': 2 });
    expect(activitySpanAttributes([{ ref: { site: 'lugano', name: 'tandem-run-1-abc-preprocess-1' } }])).toEqual({ 'tandem.stage': 'preprocess', 'tandem.site': 'lugano', 'tandem.job_attempt': 1 });
    expect(activitySpanAttributes([{ job: { tenant: 'team-a' }, run: 'run-1' }])).toEqual({ 'tandem.tenant': 'team-a' });
    expect(activitySpanAttributes([{ tenant: 'team-b', site: 'local', stage: 'train' }])).toEqual({ 'tandem.stage': 'train', 'tandem.site': 'local', 'tandem.tenant': 'team-b' });
    expect(activitySpanAttributes(['a string'])).toEqual({});
    expect(activitySpanAttributes([])).toEqual({});
  });
});
