/**
 * Collect. Trigger: the collect queue: one message when a shard has reported, and one at
 * each run's deadline. Input: collect messages (run, target, not-before time). Output: when
 * every shard of a run has reported, or its deadline has passed, the AIPerf artifacts and
 * the run manifest under `runs/<run>/<target>/` (missing shards' requests counted as
 * `lost`); when that makes every target of the run final, the run's comparison.json and
 * report.html under `runs/<run>/`, and for a scheduled run its line in
 * `schedules/<name>/history.jsonl`, the trend page `schedules/<name>/index.html` and the
 * summary on SNS (once); and the run's CloudWatch metrics, as EMF log lines (once per analysis:
 * core/metrics/cloudwatch.ts, adapters/aws/cloudwatch-metrics.ts). A batch is coalesced (core/pipeline/collect-batch.ts): one look per
 * run and target, one analysis per run. Failure: a malformed message is logged and
 * acknowledged alone; an AWS error fails the records of its run and target (or, in the run's
 * analysis, of the targets that asked for it) for a retry (ReportBatchItemFailures). Writing
 * the artifacts again yields the same files; the history takes each run once.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { BUNDLED_CHART_ASSETS } from '../adapters/bundled-chart-assets';
import { collectBatch, type CollectOutcome } from '../core/pipeline/collect-batch';
import { runMetricSets } from '../core/metrics/cloudwatch';
import { analyseRunIfFinal } from '../core/pipeline/run-analysis';
import type { ChartAssets } from '../core/report/page';
import type { Log } from '../ports';
import { defaultDeps, type Deps } from '../runtime/deps';

export function makeCollectHandler(getDeps: () => Deps, chartAssets: ChartAssets = BUNDLED_CHART_ASSETS) {
  const processor = new BatchProcessor(EventType.SQS);
  return async (event: SQSEvent, context: Context) => {
    const deps = getDeps();
    const log: Log = {
      debug: (m, f) => deps.logger.debug(m, f ?? {}),
      info: (m, f) => deps.logger.info(m, f ?? {}),
      warn: (m, f) => deps.logger.warn(m, f ?? {}),
      error: (m, f) => deps.logger.error(m, f ?? {}),
    };
    const analyse = async (runId: string) => {
      const analysis = await analyseRunIfFinal(runId, {
        store: deps.store,
        clock: deps.clock,
        notifier: deps.notifier,
        resultsBucket: deps.config.resultsBucket,
        chartAssets,
        log,
      });
      deps.logger.info('run analysis', {
        runId,
        status: analysis.status,
        ...(analysis.history ? { history: analysis.history.outcome, published: analysis.history.published } : {}),
      });
      const figures = analysis.figures;
      const stack = deps.config.stackName;
      if (figures && stack)
        deps.metrics.publish(
          runMetricSets(stack, figures),
          figures.endedAtMs ?? Number(deps.clock.nowNs() / 1_000_000n),
        );
    };
    const outcomes = await collectBatch(
      event.Records.map((r) => ({ id: r.messageId, body: r.body })),
      { store: deps.store, queue: deps.collectQueue, clock: deps.clock, analyse, log },
    );
    // Powertools builds the partial batch response from each record's outcome, decided above for its group.
    const recordHandler = async (record: SQSRecord): Promise<void> => {
      const outcome: CollectOutcome | undefined = outcomes.get(record.messageId);
      if (!outcome) throw new Error(`collect: record ${record.messageId} has no outcome`);
      if (outcome.kind === 'failed') throw outcome.error;
    };
    return processPartialResponse(event, recordHandler, processor, { context });
  };
}

export const handler = makeCollectHandler(defaultDeps);
