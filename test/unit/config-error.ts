// The ConfigError a configuration loader throws, for the config and codec unit tests.
import { ConfigError } from '../../config/errors.js';

/** The ConfigError `fn` throws (fails the test when it throws nothing or something else). */
export function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('expected a ConfigError');
}
