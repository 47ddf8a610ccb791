/**
 * A setup file of the tiers that share the machine with the timing tier (vitest.config.ts):
 * their worker, and every process it starts (a CLI, moto_server, a mock server, cdk synth),
 * runs at the lowest CPU priority, nice 19. The timing tier's files run beside them at the
 * normal priority, so that the scheduler gives a timing test's processes a core as soon as
 * they are ready to run, and the shared tiers take what CPU is left.
 */
import { setPriority } from 'node:os';

/** The lowest priority a process may give itself (no privilege needed to lower it). */
const LOWEST = 19;

try {
  setPriority(LOWEST);
} catch {
  // A platform without priorities (or a sandbox refusing it): the tiers still run, unordered.
}
