import { describe, expect, it } from 'vitest';
import { parseSageMakerTargetSpec } from '../../../lambdas/adapters/sagemaker/target-spec';

describe('parseSageMakerTargetSpec', () => {
  it.each([
    ['sagemaker:my-endpoint', { endpointName: 'my-endpoint' }],
    ['sagemaker:ep1?', { endpointName: 'ep1' }],
    [
      'sagemaker:llm-prod-2?variant=AllTraffic&component=c&region=us-east-1&container=h&attributes=trace%3Dabc%3Bx%3D1',
      {
        endpointName: 'llm-prod-2',
        targetVariant: 'AllTraffic',
        inferenceComponentName: 'c',
        region: 'us-east-1',
        targetContainerHostname: 'h',
        customAttributes: 'trace=abc;x=1',
      },
    ],
    ['sagemaker:e?region=us-gov-west-1', { endpointName: 'e', region: 'us-gov-west-1' }],
    [
      'sagemaker:e?region=eu-central-2&variant=Variant--B',
      { endpointName: 'e', region: 'eu-central-2', targetVariant: 'Variant--B' },
    ],
    // Not form encoding: a plus stays a plus; = and ; may stay unencoded in the value.
    ['sagemaker:e?attributes=a+b=c;d', { endpointName: 'e', customAttributes: 'a+b=c;d' }],
    ['sagemaker:e?attributes=x%26y', { endpointName: 'e', customAttributes: 'x&y' }],
    ['sagemaker:e?component=comp-1--x', { endpointName: 'e', inferenceComponentName: 'comp-1--x' }],
    ['sagemaker:e?&&variant=v&', { endpointName: 'e', targetVariant: 'v' }],
  ])('%s', (spec, expected) => {
    expect(parseSageMakerTargetSpec(spec)).toEqual(expected);
  });

  it.each([
    ['http://host:8000', /starts with "sagemaker:"/],
    ['sagemaker:', /no endpoint name/],
    ['sagemaker:?variant=v', /no endpoint name/],
    ['sagemaker:-bad', /not a valid name/],
    ['sagemaker:bad-', /not a valid name/],
    ['sagemaker:under_score', /not a valid name/],
    ['sagemaker:' + 'a'.repeat(64), /longer than 63/],
    ['sagemaker:e?model=x', /unknown parameter "model"/],
    ['sagemaker:e?variant=a&variant=b', /given twice/],
    ['sagemaker:e?variant=', /has no value/],
    ['sagemaker:e?variant', /has no value/],
    ['sagemaker:e?variant=has space', /not a valid name/],
    ['sagemaker:e?component=-c', /not a valid name/],
    ['sagemaker:e?container=h_1', /not a valid name/],
    ['sagemaker:e?region=useast1', /not an AWS region/],
    ['sagemaker:e?region=US-EAST-1', /not an AWS region/],
    ['sagemaker:e?attributes=%E9', /not valid percent-encoding/],
    ['sagemaker:e?attributes=%C3%A9', /ASCII/],
    ['sagemaker:e?attributes=' + 'x'.repeat(1025), /at most 1024/],
  ])('%s -> error', (spec, message) => {
    const result = parseSageMakerTargetSpec(spec);
    expect(typeof result).toBe('string');
    expect(result).toMatch(message);
  });
});
