// Prints table (b) alone: `npx tsx bench/placement/mixed-only.ts` (the full bench takes minutes).
import { printMixed } from './mixed.js';

printMixed();
