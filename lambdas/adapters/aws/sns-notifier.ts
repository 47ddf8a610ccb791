/**
 * The Notifier port on SNS: one Publish per message, with the subject SNS shows as an
 * email's subject.
 */
import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import type { Notifier } from '../../ports';

/** SNS's subject: ASCII, no line breaks, at most 100 characters. */
export function snsSubject(subject: string): string {
  const ascii = subject.replace(/[\r\n]+/g, ' ').replace(/[^\x20-\x7e]/g, '?');
  return ascii.length <= 100 ? ascii : `${ascii.slice(0, 99)}~`;
}

export class SnsNotifier implements Notifier {
  constructor(
    private readonly sns: SNSClient,
    private readonly topicArn: string,
  ) {}

  async publish(subject: string, message: string): Promise<void> {
    await this.sns.send(
      new PublishCommand({ TopicArn: this.topicArn, Subject: snsSubject(subject), Message: message }),
    );
  }
}
