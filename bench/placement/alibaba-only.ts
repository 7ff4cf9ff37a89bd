// Prints table (d) alone: `npx tsx bench/placement/alibaba-only.ts`.
import { printAlibaba } from './alibaba.js';

printAlibaba();
