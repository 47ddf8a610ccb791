/**
 * Plan (scheduled A/B windows). Being written: see lambdas/core/schedule/contract.ts.
 */
import type { SQSEvent } from 'aws-lambda';

export const handler = async (_event: SQSEvent): Promise<never> => {
  throw new Error('plan function not built yet');
};
