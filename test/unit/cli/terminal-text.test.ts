/**
 * What a capture, a target or a folder name controls reaches the terminal escaped
 * (lambdas/local/terminal-text.ts): no escape sequence is interpreted, no line forged.
 */
import { describe, expect, it } from 'vitest';
import { describePreflight } from '../../../lambdas/local/preflight';
import { terminalLine, terminalText } from '../../../lambdas/local/terminal-text';

const RETITLE = '\x1b]0;PWNED\x07\x1b[31mRED';

describe('terminal text', () => {
  it('shows escape sequences, BEL, CR, DEL and C1 controls escaped', () => {
    expect(terminalLine(RETITLE)).toBe('\\x1b]0;PWNED\\x07\\x1b[31mRED');
    expect(terminalLine('a\rb\x7fc\x9bd\x00')).toBe('a\\x0db\\x7fc\\x9bd\\x00');
  });

  it('shows the bidirectional controls that reorder a line escaped', () => {
    expect(terminalLine('abc\u202edcba\u2066x\u2069')).toBe('abc\\u202edcba\\u2066x\\u2069');
  });

  it('keeps the line breaks of a table, and escapes them in a one-line value', () => {
    expect(terminalText('a\tb\nc\x1b[2Jd\n')).toBe('a\tb\nc\\x1b[2Jd\n');
    expect(terminalLine('type\nPreflight: fake\ttab\u2028')).toBe('type\\x0aPreflight: fake\\x09tab\\u2028');
  });

  it('leaves ordinary text alone, accents and all', () => {
    const text = 'Time to first token  WORSE +4.98 [+4.89, +5.02] café ✓ 日本';
    expect(terminalText(text)).toBe(text);
    expect(terminalLine(text)).toBe(text);
  });
});

describe('the preflight lines', () => {
  it('escape what a server or the SDK put in a detail', () => {
    const { lines, failure } = describePreflight([
      { target: 'A', ok: false, detail: `https://h: ${RETITLE}\nPreflight: target B: ok` },
    ]);
    expect(lines).toBe(
      'Preflight: target A: FAILED: https://h: \\x1b]0;PWNED\\x07\\x1b[31mRED\\x0aPreflight: target B: ok\n',
    );
    expect(failure).toMatch(/^target A is not reachable/);
  });

  it("do not name --url's unnamed target 'target target'", () => {
    const ok = describePreflight([
      { target: 'target', ok: true, detail: 'http://127.0.0.1:8000 accepts connections (TCP in 0.4 ms)' },
    ]);
    expect(ok.lines).toBe('Preflight: http://127.0.0.1:8000 accepts connections (TCP in 0.4 ms)\n');
    const failed = describePreflight([
      { target: 'target', ok: false, detail: 'http://127.0.0.1:9: connection refused' },
    ]);
    expect(failed.lines).toBe('Preflight: FAILED: http://127.0.0.1:9: connection refused\n');
    expect(failed.failure).toBe(
      'the target is not reachable, nothing was sent (check the URL, or skip this check with --no-preflight)',
    );
    // A named target, or several, keep their names.
    expect(describePreflight([{ target: 'vllm', ok: true, detail: 'fine' }]).lines).toBe(
      'Preflight: target vllm: fine\n',
    );
  });
});
