// Prints table (c) alone: `npx tsx bench/placement/pollux-only.ts`.
import { printPollux } from './pollux.js';

printPollux();
