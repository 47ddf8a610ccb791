/**
 * Collect. Trigger: the collect queue: one message when a shard has reported, and one at
 * each run's deadline. Input: collect messages (run, target, not-before time). Output: when
 * every shard of a run has reported, or its deadline has passed, the AIPerf artifacts and
 * the run manifest under `runs/<run>/<target>/` (missing shards' requests counted as
 * `lost`); when that makes every target of the run final, the run's comparison.json and
 * report.html under `runs/<run>/`, and for a scheduled run its line in
 * `schedules/<name>/history.jsonl`, the trend page `schedules/<name>/index.html` and the
 * summary on SNS (once). Failure: a malformed message is logged and acknowledged; an AWS
 * error fails that record alone for a retry. Writing the artifacts again yields the same
 * files; the history takes each run once.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { BUNDLED_CHART_ASSETS } from '../adapters/bundled-chart-assets';
import { analyseRunIfFinal } from '../core/pipeline/run-analysis';
import { handleCollect, PermanentError } from '../core/pipeline/stages';
import type { ChartAssets } from '../core/report/page';
import { defaultDeps, type Deps } from '../runtime/deps';

export function makeCollectHandler(getDeps: () => Deps, chartAssets: ChartAssets = BUNDLED_CHART_ASSETS) {
  const processor = new BatchProcessor(EventType.SQS);
  const recordHandler = async (record: SQSRecord): Promise<void> => {
    const deps = getDeps();
    try {
      const afterFinal = async (runId: string, target: string) => {
        const analysis = await analyseRunIfFinal(runId, {
          store: deps.store,
          clock: deps.clock,
          notifier: deps.notifier,
          resultsBucket: deps.config.resultsBucket,
          chartAssets,
          log: {
            debug: (m, f) => deps.logger.debug(m, f ?? {}),
            info: (m, f) => deps.logger.info(m, f ?? {}),
            warn: (m, f) => deps.logger.warn(m, f ?? {}),
            error: (m, f) => deps.logger.error(m, f ?? {}),
          },
        });
        deps.logger.info('run analysis', { runId, target, status: analysis.status, ...(analysis.history ? { history: analysis.history.outcome, published: analysis.history.published } : {}) });
      };
      const { action, message } = await handleCollect(record.body, { store: deps.store, queue: deps.collectQueue, clock: deps.clock, afterFinal });
      deps.logger.info('collect', { runId: message.runId, target: message.target, action });
    } catch (error) {
      if (error instanceof PermanentError) {
        deps.logger.error('collect message rejected', { messageId: record.messageId, reason: error.message });
        return;
      }
      throw error;
    }
  };
  return (event: SQSEvent, context: Context) => processPartialResponse(event, recordHandler, processor, { context });
}

export const handler = makeCollectHandler(defaultDeps);
