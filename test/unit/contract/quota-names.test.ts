// Tenants and sites are names users choose: a lookup by name must find only what the quotas file
// (or the ledger) holds, never a member every object inherits (contract/own.ts).
import { parseQuotasFile, quotaFor } from '../../../contract/quotas.js';
import { refusal, type LedgerState } from '../../../workflows/ledger.js';
import { SpecError } from '../../../contract/parse.js';
import { validatePipelineSpec } from '../../../contract/parse.js';

const file = parseQuotasFile('quotas:\n  "*":\n    constructor: {cpus: 2}\n    acme: {gpus: 1}\n  local:\n    alice: {cpus: 1}\n');
const req = { holdId: 'run-1/train', cpus: 1, gpus: 0, memoryMB: 0 };

test('tenant "constructor" gets its own quota ("*"), not Object\'s constructor', () => {
  expect(quotaFor(file, 'local', 'constructor')).toEqual({ cpus: 2 });
  expect(quotaFor(file, 'local', 'alice')).toEqual({ cpus: 1 });
  expect(quotaFor(file, 'local', 'acme')).toEqual({ gpus: 1 });
  // Names of Object.prototype members that are not in the file are unlimited, like any other.
  for (const t of ['tostring', 'valueof', 'hasownproperty', 'toString', '__proto__']) expect(quotaFor(file, 'local', t)).toBeUndefined();
  expect(quotaFor(file, 'constructor', 'alice')).toBeUndefined(); // a site named like a member
  expect(quotaFor(parseQuotasFile('quotas:\n  local:\n    alice: {cpus: 1}\n'), 'local', 'constructor')).toBeUndefined();
});

test('the ledger books tenant "constructor" against its quota, and refuses "__proto__"', () => {
  const state: LedgerState = { site: 'local', quotas: { constructor: { cpus: 2 } }, holds: {} };
  expect(refusal(state, { ...req, tenant: 'constructor', cpus: 2 })).toBeUndefined();
  state.holds['run-1/train'] = { tenant: 'constructor', cpus: 2, gpus: 0, memoryMB: 0 };
  expect(refusal(state, { ...req, holdId: 'run-2/train', tenant: 'constructor' })).toMatch(/tenant constructor would use 3 cpus at site local, above its quota of 2/);
  // A quota recorded for another tenant only: a tenant named like a member is not capped by Object's members.
  expect(refusal({ site: 'local', quotas: {}, holds: {} }, { ...req, tenant: 'constructor' })).toBeUndefined();
  expect(refusal({ site: 'local', quotas: {}, holds: {} }, { ...req, holdId: 'toString', tenant: 'x', quota: { cpus: 0 } })).toMatch(/above its quota of 0/);
  expect(refusal(state, { ...req, holdId: 'run-3/train', tenant: '__proto__', quota: { cpus: 9 } })).toMatch(/__proto__/);
});

test('invalid tenant names are refused at validation, in the quotas file and in a spec', () => {
  const issues = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      if (e instanceof SpecError) return e.issues;
      throw e;
    }
    return [];
  };
  expect(issues(() => parseQuotasFile('quotas:\n  local:\n    __proto__: {cpus: 1}\n'))).toEqual([expect.objectContaining({ path: 'quotas.local.__proto__', line: 3 })]);
  expect(issues(() => parseQuotasFile('quotas:\n  local:\n    toString: {cpus: 1}\n'))).toEqual([expect.objectContaining({ path: 'quotas.local.toString', message: expect.stringMatching(/tenant name/) })]);
  expect(issues(() => validatePipelineSpec({ name: 'x', tenant: '__proto__' }))).toEqual([expect.objectContaining({ path: 'tenant' })]);
  expect(validatePipelineSpec({ name: 'x', tenant: 'constructor' }).tenant).toBe('constructor'); // a valid name, now an ordinary one
});
