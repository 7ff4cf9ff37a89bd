// The one error type of the expression and template helpers, so callers can tell a user's bad
// expression from a bug.
export class ExprError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExprError';
  }
}
