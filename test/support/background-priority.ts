/**
 * Setup file of the tiers that run beside the timing tier (vitest.config.ts): their worker,
 * and what it starts, at the lowest CPU priority (priority.ts).
 */
import { lowerThisProcess } from './priority';

lowerThisProcess();
