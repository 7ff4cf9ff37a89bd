// The ConfigError a configuration loader throws, for the config and codec unit tests.
import { ConfigError } from '../../config/errors.js';
import { thrown } from './thrown.js';

/** The ConfigError `fn` throws (fails the test when it throws nothing or something else). */
export const configError = (fn: () => unknown): ConfigError => thrown(ConfigError, fn);
