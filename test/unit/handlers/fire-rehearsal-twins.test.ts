/**
 * The fire function's rehearsal twins (deps.rehearsalTwin, the sinks of
 * lambdas/adapters/http/rehearsal-sink.ts and lambdas/adapters/sagemaker/rehearsal-sink.ts):
 * each target kind's own client code, answered by a sink in this process, on every path a
 * replay takes (non-streamed and streamed chat, a CSV body to a SageMaker endpoint): every
 * rehearsal request succeeds (a twin that fails compiles the error path, not the one the run
 * takes), and the configured targets, unreachable here, are never contacted.
 */
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../lambdas/adapters/system-clock';
import { rehearseTwins } from '../../../lambdas/core/fire/rehearsal';
import { ENV } from '../../../lambdas/runtime/config';
import { createDeps } from '../../../lambdas/runtime/deps';
import { scheduledRequest } from '../../support/fixtures';
import { chatRequests } from '../../support/shard-messages';

const deps = createDeps({
  env: {
    [ENV.resultsBucket]: 'results-bucket',
    [ENV.replayQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/replay',
    [ENV.collectQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/collect',
    // Port 9 (discard) on a documentation address: nothing answers there.
    [ENV.targets]: JSON.stringify([
      { name: 'A', url: 'http://192.0.2.1:9', apiKeySecret: 'never-read' },
      { kind: 'sagemaker', name: 'B', endpointName: 'prod-endpoint', region: 'eu-west-1', variant: 'blue' },
    ]),
  },
});

describe('rehearsal twins of the fire function', () => {
  it.each([
    ['an HTTP target, non-streamed and streamed chat', 'A', [...chatRequests(2, 1), ...chatRequests(2, 1, true)]],
    [
      'a SageMaker target, chat both ways and a CSV body',
      'B',
      [
        ...chatRequests(2, 1),
        ...chatRequests(2, 1, true),
        scheduledRequest(9, 5, { contentType: 'text/csv', accept: 'text/csv', body: Buffer.from('1,2,3\n') }),
      ],
    ],
  ])('%s: every request answered by the sink', async (_name, targetName, sample) => {
    const target = deps.config.targets.find((t) => t.name === targetName)!;
    const result = await rehearseTwins([() => deps.rehearsalTwin(target)], [sample], 40, systemClock);
    expect(result).toMatchObject({ requests: 40, succeeded: 40 });
  });

  it('a stop signal ends the rehearsal early and counts only what was sent', async () => {
    const target = deps.config.targets[0]!;
    const stop = new AbortController();
    stop.abort();
    expect(
      await rehearseTwins([() => deps.rehearsalTwin(target)], [chatRequests(2, 1)], 200, systemClock, stop.signal),
    ).toMatchObject({ requests: 0, succeeded: 0 });
  });
});
