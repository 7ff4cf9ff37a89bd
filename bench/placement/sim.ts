// The trace-driven simulator lives in placement/simulate.ts (pure, shared with `tandem simulate`).
export * from '../../placement/simulate.js';
