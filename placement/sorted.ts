// Binary search over ascending times, shared by the planning profile (dynp.ts) and the carbon series
// (energy.ts).

/** The last index k with xs[k] <= t; 0 when t is before xs[0] (or xs is empty). */
export function lastAtOrBefore(xs: ArrayLike<number>, t: number): number {
  let lo = 0;
  let hi = xs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (xs[mid] <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
