// Public surface of the pure placement engine (safe to import from workflows).
export * from './types.js';
export { ClusterState, type Allocation } from './state.js';
export { schedule, type PassOptions } from './engine.js';
export { findFit, liveView, slotsOn, type Fit, type View } from './fit.js';
export { demand, dominant, entitlement } from './policies.js';
export { typicalWorkload } from './fragmentation.js';
export { DYNP_ORDERS } from './dynp.js';
export { duration, explainDecision, inTime, type ExplainOptions } from './explain.js';
export { LiveCluster, buildState, decide, decideOn, sameData, sameInventory, sameJob, type DecideOptions, type RunningJob, type ObserveResult } from './live.js';
export { DEFAULT_POWER, EnergyMeter, carbonHold, intensityAt, intensityIntegral, nodePower, type EnergyReport } from './energy.js';
