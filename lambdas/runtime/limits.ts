/**
 * Lambda gives a function 1,024 file descriptors. The SDK's sockets, the runtime and the
 * log take some; the rest are shared by the targets' connection pools. Shared by the
 * composition root and the CDK sizing, so the two cannot disagree.
 */
export const LAMBDA_FILE_DESCRIPTORS = 1024;
export const RESERVED_FILE_DESCRIPTORS = 124;

export function connectionsPerTarget(targets: number, maxConnections: number | undefined): number {
  const budget = Math.floor((LAMBDA_FILE_DESCRIPTORS - RESERVED_FILE_DESCRIPTORS) / Math.max(1, targets));
  return Math.max(1, Math.min(budget, maxConnections ?? budget));
}

/**
 * Lambda gives a function CPU in proportion to its memory: one vCPU at 1,769 MB
 * (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html).
 */
export const ONE_VCPU_MB = 1769;
