/**
 * The run's stack-template server (test/support/iam/stack-template-server.ts): the template it
 * answers is the one this process synthesizes for the same configuration; a configuration the
 * stack refuses comes back as an error naming the problem; without the server,
 * synthesizeStack synthesizes in this process.
 */
import { describe, expect, it } from 'vitest';
import { synthesizeStack } from '../support/iam/deployment';
import { stackTemplate } from '../support/iam/stack-template';
import { STACK_TEMPLATE_SERVER_ENV } from '../support/iam/stack-template-server';

const CONFIG = {
  captureBucket: 'capture-bucket',
  capturePrefix: 'datacapture/',
  targets: [{ name: 'A', url: 'http://127.0.0.1:9', apiKeySecret: 'replay/key-a' }],
  leadSeconds: 5,
};

describe('the stack-template server', () => {
  it('is set up for this run, and answers the template this process synthesizes', async () => {
    expect(
      process.env[STACK_TEMPLATE_SERVER_ENV],
      `${STACK_TEMPLATE_SERVER_ENV} is set by the run's global setup`,
    ).toBeTruthy();
    const served = await synthesizeStack(CONFIG, 'Served');
    expect(served).toEqual(stackTemplate(CONFIG, 'Served'));
    expect(Object.keys(served.Resources).length).toBeGreaterThan(10);
  });

  it('says what is wrong with a configuration the stack refuses', async () => {
    await expect(synthesizeStack({ ...CONFIG, leadSecond: 5 }, 'Refused')).rejects.toThrow(
      /leadSecond: unknown setting; did you mean `leadSeconds`\?/,
    );
  });

  it('without the server: the template synthesized in this process', async () => {
    const saved = process.env[STACK_TEMPLATE_SERVER_ENV];
    delete process.env[STACK_TEMPLATE_SERVER_ENV];
    try {
      expect(await synthesizeStack(CONFIG, 'Local')).toEqual(stackTemplate(CONFIG, 'Local'));
    } finally {
      process.env[STACK_TEMPLATE_SERVER_ENV] = saved;
    }
  });
});
