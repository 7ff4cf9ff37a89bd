// The issues a spec validation reports, for tests that check what a bad spec is told (no server needed).
import { SpecError } from '../contract/parse.js';

export const issuesOf = (fn: () => unknown): SpecError['issues'] => {
  try {
    fn();
  } catch (e) {
    if (e instanceof SpecError) return e.issues;
    throw e;
  }
  throw new Error('expected a SpecError');
};
