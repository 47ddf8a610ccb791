import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { MessageQueue } from '../../ports';

export class SqsQueue implements MessageQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async sendBatch(entries: { id: string; body: string; delaySeconds: number }[]): Promise<{ failedIds: string[] }> {
    if (entries.length === 0) return { failedIds: [] };
    const out = await this.client.send(
      new SendMessageBatchCommand({
        QueueUrl: this.queueUrl,
        Entries: entries.map((e, i) => ({
          Id: `${i}-${e.id}`.slice(0, 80),
          MessageBody: e.body,
          DelaySeconds: e.delaySeconds,
        })),
      }),
    );
    return {
      failedIds: (out.Failed ?? []).map((f) => entries[Number((f.Id ?? '').split('-')[0])]?.id ?? '').filter(Boolean),
    };
  }
}
