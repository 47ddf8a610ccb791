import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { closest, didYouMean, editDistance } from '../../../lambdas/core/suggest';
import type { Command, Option } from 'commander';
import { decimalNumber, GOODPUT_TAGS, parseGoodput, usageMessage } from '../../../lambdas/local/cli-usage';
import { buildProgram } from '../../../lambdas/local/program';
import { describePreflight, preflight, probeTcp } from '../../../lambdas/local/preflight';

describe('edit distance and suggestions', () => {
  it('counts insertions, deletions, substitutions and adjacent transpositions as one edit each', () => {
    expect(editDistance('leadSeconds', 'leadSeconds')).toBe(0);
    expect(editDistance('leadSecond', 'leadSeconds')).toBe(1);
    expect(editDistance('laedSeconds', 'leadSeconds')).toBe(1);
    expect(editDistance('leadSecinds', 'leadSeconds')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it('suggests the closest name when it is close, ignoring case, and nothing otherwise', () => {
    const keys = ['leadSeconds', 'lagSeconds', 'graceSeconds', 'targets', 'mode'];
    expect(closest('leadseconds', keys)).toBe('leadSeconds');
    expect(closest('leadSecs', keys)).toBe('leadSeconds');
    expect(closest('target', keys)).toBe('targets');
    expect(closest('colour', keys)).toBeNull();
    expect(closest('x', keys)).toBeNull();
    expect(didYouMean('mdoe', keys)).toBe('; did you mean `mode`?');
    expect(didYouMean('zzz', keys)).toBe('');
  });
});

describe('usage messages', () => {
  it('are one line naming the command, and one line of hint', () => {
    expect(usageMessage('replay', '--limit must be > 0')).toBe(
      "capture-replay replay: --limit must be > 0\nRun 'capture-replay replay --help' for the options.\n",
    );
  });
});

describe('--goodput', () => {
  it("reads AIPerf's spelling: space-separated metric:value pairs (commas too)", () => {
    expect(parseGoodput('time_to_first_token:200 inter_token_latency:50')).toEqual({
      time_to_first_token: 200,
      inter_token_latency: 50,
    });
    expect(parseGoodput(' request_latency:1500.5,output_token_throughput_per_user:20 ')).toEqual({
      request_latency: 1500.5,
      output_token_throughput_per_user: 20,
    });
  });

  it('refuses what it cannot read, saying what is wrong', () => {
    expect(parseGoodput('')).toMatch(/^--goodput takes metric:value pairs/);
    expect(parseGoodput('ttft:200')).toMatch(/^--goodput: unknown metric "ttft" \(one of time_to_first_token, /);
    expect(parseGoodput('request_latncy:200')).toMatch(/did you mean `request_latency`\?/);
    expect(parseGoodput('request_latency:fast')).toBe(
      '--goodput: "request_latency:fast" is not metric:value (e.g. time_to_first_token:200)',
    );
    expect(parseGoodput('request_latency:-1')).toBe('--goodput: request_latency must be >= 0 (got -1)');
    expect(parseGoodput('request_latency:1 request_latency:2')).toBe('--goodput: request_latency is given twice');
  });

  it('takes the per-request metrics with one value each', () => {
    expect(GOODPUT_TAGS).toContain('time_to_first_token');
    expect(GOODPUT_TAGS).toContain('output_token_throughput_per_user');
    expect(GOODPUT_TAGS).not.toContain('inter_chunk_latency');
    expect(GOODPUT_TAGS).not.toContain('schedule_lag');
  });
});

describe('preflight', () => {
  it('connects to a listening port and reports a refused one', async () => {
    const server = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const up = await probeTcp(new URL(`http://127.0.0.1:${port}/v1`), 2000);
      expect(up.ok).toBe(true);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    const down = await probeTcp(new URL(`http://127.0.0.1:${port}`), 2000);
    expect(down).toEqual({ ok: false, error: 'connection refused (nothing listens there) [ECONNREFUSED]' });
  });

  it('describes every target and names the unreachable ones', async () => {
    const results = await preflight([{ name: 'A', kind: 'http', url: new URL('http://127.0.0.1:9') }], {
      connectTimeoutMs: 2000,
    });
    const { lines, failure } = describePreflight(results);
    expect(lines).toBe(
      'Preflight: target A: FAILED: http://127.0.0.1:9: connection refused (nothing listens there) [ECONNREFUSED] at 127.0.0.1:9\n',
    );
    expect(failure).toBe(
      'target A is not reachable, nothing was sent (check the URL, or skip this check with --no-preflight)',
    );
    expect(describePreflight([{ target: 'A', ok: true, detail: 'fine' }]).failure).toBeNull();
  });
});

describe('numbers on the command line (issue 32 item 12)', () => {
  it('are decimal: digits, a point, an exponent, a sign; not hex, binary, octal, Infinity or blank, which Number() takes', () => {
    for (const [raw, value] of [
      ['2', 2],
      [' 2 ', 2],
      ['-1.5', -1.5],
      ['.5', 0.5],
      ['5.', 5],
      ['1e-7', 1e-7],
      ['2E3', 2000],
      ['+3', 3],
    ] as const)
      expect(decimalNumber(raw), raw).toBe(value);
    for (const raw of [
      '0x2',
      '0X2',
      '0b11',
      '0o7',
      'Infinity',
      '-Infinity',
      '',
      ' ',
      '1_000',
      '2 3',
      'e5',
      '1e',
      '0x',
      'NaN',
    ])
      expect(decimalNumber(raw), raw).toBeNaN();
  });

  it('every numeric flag of every command refuses 0x2, 0b10 and 0o2 where it takes 2 (one parser)', () => {
    const walk = (command: Command): [string, Option][] => [
      ...command.options.map((o): [string, Option] => [command.name(), o]),
      ...command.commands.flatMap(walk),
    ];
    const numeric: string[] = [];
    const taken: string[] = [];
    for (const [command, option] of walk(buildProgram())) {
      const parse = (option as Option & { parseArg?: (raw: string, previous: unknown) => unknown }).parseArg;
      if (!parse) continue;
      const value = (() => {
        try {
          return parse.call(option, '2', undefined);
        } catch {
          return undefined;
        }
      })();
      if (typeof value !== 'number') continue;
      numeric.push(`${command} ${option.long}`);
      for (const raw of ['0x2', '0b10', '0o2']) {
        try {
          parse.call(option, raw, undefined);
          taken.push(`${command} ${option.long} ${raw}`);
        } catch {
          // refused, as it should be
        }
      }
    }
    // The walk found the numeric flags (replay's, capacity's, link's, the mocks'...).
    expect(numeric).toEqual(
      expect.arrayContaining([
        'replay --amplify',
        'replay --workers',
        'replay --rehearsal',
        'capacity --growth',
        'link --expires',
        'verify-deploy --timeout',
        'mock-server --port',
        'mock-sagemaker --ttft-ms',
      ]),
    );
    expect(taken).toEqual([]);
    expect(parseGoodput('time_to_first_token:0x10')).toBe(
      '--goodput: "time_to_first_token:0x10" is not metric:value (e.g. time_to_first_token:200)',
    );
  });
});
