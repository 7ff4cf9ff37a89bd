// The error a test expects a call to throw, of one class: fails the test when the call throws nothing
// or something else (which is rethrown as it was, with its own message and stack).
export function thrown<E extends Error>(cls: abstract new (...args: never[]) => E, fn: () => unknown): E {
  try {
    fn();
  } catch (e) {
    if (e instanceof cls) return e;
    throw e;
  }
  throw new Error(`expected a ${cls.name}`);
}
