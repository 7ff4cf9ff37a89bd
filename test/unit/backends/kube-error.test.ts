// kubeError: what an API refusal looks like to the user. The body is the metav1.Status the real
// kube-apiserver 1.33 sends for a Job whose name is too long for the labels it is copied into
// (captured in jobs.cp.test.ts): the template's label is refused three times, once per copy.
import { ApiException } from '@kubernetes/client-node';
import { kubeError } from '../../../backends/kubernetes/client.js';

const name = `tandem-${'x'.repeat(60)}-1`;
const tooLong = { field: '', message: `Invalid value: "${name}": must be no more than 63 characters`, reason: 'FieldValueInvalid' };
const status = {
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  message: `Job.batch "${name}" is invalid: [metadata.labels: ${tooLong.message}, spec.template.labels: ${tooLong.message}, spec.template.labels: ${tooLong.message}, spec.template.labels: ${tooLong.message}]`,
  reason: 'Invalid',
  details: { name, group: 'batch', kind: 'Job', causes: [{ ...tooLong, field: 'metadata.labels' }, { ...tooLong, field: 'spec.template.labels' }, { ...tooLong, field: 'spec.template.labels' }, { ...tooLong, field: 'spec.template.labels' }] },
  code: 422,
};

test('a 422 names each refused field once, without repeating the Status message or any header', () => {
  const e = kubeError(new ApiException(422, 'HTTP-Code: 422 Message: Unknown API Status Code! Headers: {"authorization":"Bearer secret"}', JSON.stringify(status), { 'content-type': 'application/json' }), `create Job tandem/${name}`);
  expect(e).toMatchObject({ code: 422, reason: 'Invalid', transient: false });
  expect(e.causes).toEqual([
    { field: 'metadata.labels', message: tooLong.message },
    { field: 'spec.template.labels', message: tooLong.message },
  ]);
  expect(e.message).toBe(`create Job tandem/${name}: 422 Invalid: metadata.labels: ${tooLong.message}; spec.template.labels: ${tooLong.message}`);
  expect(e.message).not.toMatch(/Bearer|secret/);
});

test('a refusal without causes keeps the Status message', () => {
  const e = kubeError(new ApiException(409, 'x', JSON.stringify({ kind: 'Status', reason: 'AlreadyExists', message: 'jobs.batch "a" already exists', code: 409 }), {}), 'create Job tandem/a');
  expect(e.message).toBe('create Job tandem/a: 409 AlreadyExists jobs.batch "a" already exists');
  expect(e.causes).toEqual([]);
});
