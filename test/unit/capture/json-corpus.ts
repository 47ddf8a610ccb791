/**
 * Seeded JSON-ish text for the differential tests: well-formed documents (every grammar corner:
 * escapes, lone surrogates, numbers in all their forms, whitespace, deep nesting) and the
 * same broken in the ways writers and corruption break them (raw control characters, bad
 * escapes, bad numbers, truncation, stray bytes), plus blind mutations of good documents.
 */
import { seededRandom } from '../../../lambdas/core/random';

export type Random = () => number;

export const rng = (seed: number): Random => seededRandom(seed);

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const int = (random: Random, lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));

const WHITESPACE = [' ', '\t', '\n', '\r'];
const STRING_PIECES = [
  'hello',
  ' world ',
  'naïve café',
  '東京データ',
  '😀',
  '\ud800', // lone high surrogate, raw
  '\udc00', // lone low surrogate, raw
  '\\"',
  '\\\\',
  '\\/',
  '\\b',
  '\\f',
  '\\n',
  '\\r',
  '\\t',
  '\\u0041',
  '\\u00e9',
  '\\uD83D\\uDE00',
  '\\ud800',
  '\\u001f',
  '\u007f',
  '\u00a0',
  '\u2028',
  '"usage"',
];
const BAD_STRING_PIECES = [
  '\n',
  '\t',
  '\u0000',
  '\u001f',
  '\r',
  '\\x41',
  '\\u12',
  '\\u12G4',
  '\\a',
  '\\',
  "\\'",
  '\\U0041',
  '\\0',
];
const NUMBERS = [
  '0',
  '-0',
  '1',
  '-1',
  '12345678901234567890',
  '0.5',
  '-0.0',
  '1e5',
  '1E+5',
  '1e-5',
  '2.5E-3',
  '123.456e789',
  '1e400',
  '-1e-400',
];
const BAD_NUMBERS = [
  '01',
  '-',
  '1.',
  '.5',
  '+1',
  '1e',
  '1e+',
  '-.5',
  '0x10',
  '1.e3',
  'NaN',
  'Infinity',
  '--1',
  '1_000',
  '٣',
];

function ws(random: Random): string {
  if (random() < 0.6) return '';
  let s = '';
  for (let i = int(random, 1, 3); i > 0; i--) s += pick(random, WHITESPACE);
  return s;
}

function stringLiteral(random: Random, bad: boolean): string {
  let s = '"';
  for (let i = int(random, 0, 5); i > 0; i--) s += pick(random, STRING_PIECES);
  if (bad) s += pick(random, BAD_STRING_PIECES);
  if (random() < 0.3) s += 'x'.repeat(int(random, 1, 300));
  return s + '"';
}

/** A JSON value as text; `bad` plants one fault somewhere in it. */
function value(random: Random, depth: number, budget: { bad: number }): string {
  const plant = () => budget.bad > 0 && random() < 0.15 && budget.bad-- > 0;
  const kind = depth > 6 ? int(random, 0, 3) : int(random, 0, 6);
  switch (kind) {
    case 0:
      return stringLiteral(random, plant());
    case 1:
      return plant() ? pick(random, BAD_NUMBERS) : pick(random, NUMBERS);
    case 2:
      return plant()
        ? pick(random, ['tru', 'True', 'nul', 'falsey', 'undefined'])
        : pick(random, ['true', 'false', 'null']);
    case 3:
      return plant() ? pick(random, ["'single'", '{', ']', '', ',']) : stringLiteral(random, false);
    case 4:
    case 5: {
      const n = int(random, 0, 4);
      const members: string[] = [];
      for (let i = 0; i < n; i++)
        members.push(
          `${ws(random)}${stringLiteral(random, plant())}${ws(random)}${plant() ? '' : ':'}${ws(random)}` +
            `${value(random, depth + 1, budget)}${ws(random)}`,
        );
      const trailing = plant() ? ',' : '';
      return `{${members.join(plant() ? '' : ',')}${trailing}${n === 0 ? ws(random) : ''}}`;
    }
    default: {
      const n = int(random, 0, 5);
      const items: string[] = [];
      for (let i = 0; i < n; i++) items.push(`${ws(random)}${value(random, depth + 1, budget)}${ws(random)}`);
      const trailing = plant() ? ',' : '';
      return `[${items.join(plant() ? ' ' : ',')}${trailing}${n === 0 ? ws(random) : ''}]`;
    }
  }
}

/** A document: well-formed when `faults` is 0 (mostly: a planted fault may not land). */
export function jsonDocument(random: Random, faults = 0): string {
  const budget = { bad: faults };
  let doc = `${ws(random)}${value(random, 0, budget)}${ws(random)}`;
  if (budget.bad > 0 && random() < 0.5) doc += pick(random, ['x', '}', ']', ',', '{}', '\u0000', '\ufeff', '\u00a0']);
  if (faults > 0 && random() < 0.1) doc = pick(random, ['\ufeff', '\u00a0', '\u000b', '\u000c']) + doc;
  return doc;
}

const MUTATION_CHARS = [
  '"',
  '\\',
  '{',
  '}',
  '[',
  ']',
  ':',
  ',',
  ' ',
  '\n',
  '\t',
  '\u0000',
  '\u001f',
  'e',
  '-',
  '.',
  '0',
  'u',
  'a',
  '\ud800',
  'é',
];

/** One blind edit of `text`: a character deleted, inserted or replaced, or the text cut short. */
export function mutate(random: Random, text: string): string {
  const at = int(random, 0, Math.max(0, text.length - 1));
  switch (int(random, 0, 3)) {
    case 0:
      return text.slice(0, at) + text.slice(at + 1);
    case 1:
      return text.slice(0, at) + pick(random, MUTATION_CHARS) + text.slice(at);
    case 2:
      return text.slice(0, at) + pick(random, MUTATION_CHARS) + text.slice(at + 1);
    default:
      return text.slice(0, at);
  }
}

/** Hand-picked corners of JSON.parse's grammar, good and bad. */
export const JSON_CORNERS: readonly string[] = [
  '',
  ' ',
  '\n\t\r ',
  '{}',
  '[]',
  ' { } ',
  '[ ]',
  '{"a":1}',
  '{"a" : 1 , "b":[true,false,null]}',
  '{"a":1,}',
  '[1,]',
  '[,1]',
  '{,"a":1}',
  '{"a"}',
  '{"a":}',
  '{a:1}',
  "{'a':1}",
  '{"a":1 "b":2}',
  '[1 2]',
  '[[[[[[]]]]]]',
  '[[[[[[]]]]]',
  '[[[[[]]]]]]',
  '{"a":[}',
  '{"a":{]}',
  '"x"',
  '""',
  '"\\u0000"',
  '"\u0000"',
  '"\u001f"',
  '" "',
  '"\u007f"',
  '"\\uDEAD"',
  '"\ud800"',
  '"\\u00"',
  '"\\u00zz"',
  '"\\"',
  '"\\\\"',
  '"\\\\\\"',
  '"abc',
  'abc"',
  '0',
  '-0',
  '00',
  '-',
  '1.',
  '1.0',
  '.1',
  '1e1',
  '1e',
  '1E-1',
  '1e+',
  '-01',
  '1.5e+10',
  'true',
  'tru',
  'true ',
  'truex',
  'null',
  'nul',
  'false',
  'fals',
  'NaN',
  '\ufeff{}',
  '{}\ufeff',
  '\u00a0{}',
  '\u000b{}',
  '\u000c{}',
  '\u2028{}',
  '{}x',
  '{}{}',
  '{} []',
  '1 2',
  '"a" "b"',
  '{"a":1}\u0000',
  '[' + '['.repeat(5000) + ']'.repeat(5000) + ']',
  '[' + '['.repeat(5000) + ']'.repeat(4999) + ']',
  '{"a":'.repeat(3000) + '1' + '}'.repeat(3000),
  '{"a":'.repeat(3000) + '1' + '}'.repeat(2999),
  '{"messages":[{"role":"user","content":"hi\\nthere \\"you\\""}],"max_tokens":16}',
  '{\n  "messages": [\n    {"role": "user", "content": "hi"}\n  ]\n}\n',
  '{"content":"line one\nline two"}',
  '{"content":"tab\there"}',
  '{"s":"' + 'a'.repeat(70_000) + '\\n' + 'b'.repeat(1000) + '"}',
  '{"s":"' + 'a'.repeat(70_000) + '\n' + 'b'.repeat(1000) + '"}',
];
