/**
 * Is this text one JSON document, as `JSON.parse` would take it? Without building the value.
 *
 * The parser must reject a JSON-typed body that is not JSON (`bad_inner_json`), and the body
 * was already unescaped out of the capture line by the line's own JSON.parse: a second
 * JSON.parse of it built every string and object again only to throw them away, and cost
 * ~40 % of the whole parse. Captured bodies are mostly string content (prompts), so this
 * checker spends its time where V8 is quickest: it jumps over string contents with
 * `indexOf` (memchr on one-byte strings) and finds control characters with one sticky regex,
 * and walks only the few structural characters by hand. Containers are tracked on an explicit
 * stack, so any depth JSON.parse takes is taken (V8's JSON.parse is iterative too).
 *
 * The grammar it checks, and why a checker too strict is safe: isJsonText.
 */

import { createSimdControlCheck } from './control-bytes';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OBJECT = 1;
const ARRAY = 2;

// Any character JSON forbids raw in a string; global so that `lastIndex` starts the search.
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL = /[\u0000-\u001f]/g;

// Open containers of the document being checked (reused: a check allocates nothing).
let stack = new Uint8Array(64);

// Per-document caches of the next backslash and control character at or after the position
// they were searched from: positions only grow, so each is searched for about once.
let text = '';
let length = 0;
let nextBackslash = -1;
let backslashFrom = 0;
let nextControl = -1;
let controlFrom = 0;
// False once the document's bytes are known to hold no byte below 0x20: strings need no search then.
let controlsPossible = true;

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipWhitespace(i: number): number {
  while (i < length && isWhitespace(text.charCodeAt(i))) i++;
  return i;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** Position of the first backslash at or after `from`, or `length`. */
function backslashAt(from: number): number {
  if (from < backslashFrom || (nextBackslash < from && nextBackslash !== length)) {
    const found = text.indexOf('\\', from);
    nextBackslash = found === -1 ? length : found;
    backslashFrom = from;
  }
  return nextBackslash;
}

/** Position of the first character below U+0020 at or after `from`, or `length`. */
function controlAt(from: number): number {
  if (from < controlFrom || (nextControl < from && nextControl !== length)) {
    CONTROL.lastIndex = from;
    const found = CONTROL.exec(text);
    nextControl = found === null ? length : found.index;
    controlFrom = from;
  }
  return nextControl;
}

/** End (after the closing quote) of the string whose opening quote is at `i`, or -1. */
function skipString(i: number): number {
  const start = i + 1;
  let from = start;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return -1;
    const backslash = backslashAt(from);
    if (backslash < quote) {
      // An escape before the quote: check it and go on after it (it may be the quote's own).
      const e = text.charCodeAt(backslash + 1);
      if (e === 0x75 /* u */) {
        if (
          !(
            isHex(text.charCodeAt(backslash + 2)) &&
            isHex(text.charCodeAt(backslash + 3)) &&
            isHex(text.charCodeAt(backslash + 4)) &&
            isHex(text.charCodeAt(backslash + 5))
          )
        )
          return -1;
        from = backslash + 6;
      } else if (
        e === QUOTE ||
        e === BACKSLASH ||
        e === 0x2f ||
        e === 0x62 ||
        e === 0x66 ||
        e === 0x6e ||
        e === 0x72 ||
        e === 0x74
      ) {
        from = backslash + 2;
      } else return -1;
      continue;
    }
    // The closing quote: nothing raw below U+0020 between the quotes.
    if (controlsPossible && controlAt(start) < quote) return -1;
    return quote + 1;
  }
}

/** End of the number starting at `i`, or -1. */
function skipNumber(i: number): number {
  if (text.charCodeAt(i) === 0x2d) i++;
  let c = text.charCodeAt(i);
  if (c === 0x30) c = text.charCodeAt(++i);
  else if (c >= 0x31 && c <= 0x39) {
    do c = text.charCodeAt(++i);
    while (c >= 0x30 && c <= 0x39);
  } else return -1;
  if (c === 0x2e) {
    c = text.charCodeAt(++i);
    if (!(c >= 0x30 && c <= 0x39)) return -1;
    do c = text.charCodeAt(++i);
    while (c >= 0x30 && c <= 0x39);
  }
  if (c === 0x65 || c === 0x45) {
    c = text.charCodeAt(++i);
    if (c === 0x2b || c === 0x2d) c = text.charCodeAt(++i);
    if (!(c >= 0x30 && c <= 0x39)) return -1;
    do c = text.charCodeAt(++i);
    while (c >= 0x30 && c <= 0x39);
  }
  return i;
}

/** After an object's `{` or `,`: a key, its colon, and the position of its value; or -1. */
function skipKey(i: number): number {
  i = skipWhitespace(i);
  if (text.charCodeAt(i) !== QUOTE) return -1;
  i = skipString(i);
  if (i < 0) return -1;
  i = skipWhitespace(i);
  return text.charCodeAt(i) === 0x3a ? i + 1 : -1;
}

function push(depth: number, kind: number): void {
  if (depth === stack.length) {
    const grown = new Uint8Array(stack.length * 2);
    grown.set(stack);
    stack = grown;
  }
  stack[depth] = kind;
}

function check(): boolean {
  let depth = 0;
  let i = 0;
  for (;;) {
    // A value at i.
    i = skipWhitespace(i);
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = skipString(i);
    else if (c === 0x7b /* { */) {
      i = skipWhitespace(i + 1);
      if (text.charCodeAt(i) === 0x7d) i++;
      else {
        push(depth++, OBJECT);
        i = skipKey(i);
        if (i < 0) return false;
        continue;
      }
    } else if (c === 0x5b /* [ */) {
      i = skipWhitespace(i + 1);
      if (text.charCodeAt(i) === 0x5d) i++;
      else {
        push(depth++, ARRAY);
        continue;
      }
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) i = skipNumber(i);
    else if (c === 0x74 /* t */) i = text.startsWith('true', i) ? i + 4 : -1;
    else if (c === 0x66 /* f */) i = text.startsWith('false', i) ? i + 5 : -1;
    else if (c === 0x6e /* n */) i = text.startsWith('null', i) ? i + 4 : -1;
    else return false;
    if (i < 0) return false;
    // After a value: close what it ends, until a comma asks for the next one.
    for (;;) {
      i = skipWhitespace(i);
      if (depth === 0) return i === length;
      const next = text.charCodeAt(i);
      const kind = stack[depth - 1];
      if (next === 0x2c /* , */) {
        i = kind === OBJECT ? skipKey(i + 1) : i + 1;
        if (i < 0) return false;
        break;
      }
      if (next !== (kind === OBJECT ? 0x7d : 0x5d)) return false;
      depth--;
      i++;
    }
  }
}

// The aligned 32-bit words of the last buffer looked at (the parser's slab: one view per slab).
let wordsOf: ArrayBufferLike | null = null;
let words: Int32Array<ArrayBufferLike> = new Int32Array(0);

/**
 * Whether any byte is below 0x20, in plain JS. Four bytes at a time: a 32-bit word holds such a
 * byte exactly when `(w - 0x20202020) & ~w & 0x80808080` is non-zero (the "hasless" test, exact
 * for any bound up to 0x80; a borrow can only add bits above a byte that is really below). The
 * tests are OR-ed over four words a step and read once at the end: ~5-7.5 GB/s here, four
 * times the regex over the string and twice the one-word loop. `hasControlByte` uses Wasm SIMD
 * instead where it can (control-bytes.ts: about twice this, the copy included).
 */
export function hasControlByteWords(bytes: Uint8Array): boolean {
  const begin = bytes.byteOffset;
  const end = begin + bytes.byteLength;
  let k = (begin + 3) >> 2; // first whole word
  const last = end >> 2; // past the last whole word
  if (last - k < 8) {
    for (let i = 0; i < bytes.length; i++) if ((bytes[i] as number) < 0x20) return true;
    return false;
  }
  for (let i = 0; i < k * 4 - begin; i++) if ((bytes[i] as number) < 0x20) return true;
  const buffer = bytes.buffer;
  if (wordsOf !== buffer) {
    words = new Int32Array(buffer, 0, buffer.byteLength >> 2);
    wordsOf = buffer;
  }
  let found = 0;
  for (; k + 4 <= last; k += 4) {
    const a = words[k] as number;
    const b = words[k + 1] as number;
    const c = words[k + 2] as number;
    const d = words[k + 3] as number;
    found |=
      (((a - 0x20202020) | 0) & ~a) |
      (((b - 0x20202020) | 0) & ~b) |
      (((c - 0x20202020) | 0) & ~c) |
      (((d - 0x20202020) | 0) & ~d);
  }
  for (; k < last; k++) {
    const a = words[k] as number;
    found |= ((a - 0x20202020) | 0) & ~a;
  }
  if ((found & 0x80808080) !== 0) return true;
  for (let i = last * 4 - begin; i < bytes.length; i++) if ((bytes[i] as number) < 0x20) return true;
  return false;
}

const simdControlCheck = createSimdControlCheck();

// Below this, a call into Wasm and the copy cost more than the JS loop saves.
const SIMD_MIN_BYTES = 64;

/** Whether any byte is below 0x20 (`hasControlByteWords`, or Wasm SIMD where this engine has it). */
export function hasControlByte(bytes: Uint8Array): boolean {
  return simdControlCheck !== null && bytes.byteLength >= SIMD_MIN_BYTES
    ? simdControlCheck(bytes)
    : hasControlByteWords(bytes);
}

/**
 * True only when `JSON.parse(candidate)` would succeed. A false may be taken back by
 * JSON.parse (the caller asks it then, for the error message): it never is on the test corpus.
 * `utf8`, when given, must be the UTF-8 encoding of `candidate` (or bytes whose UTF-8 decoding
 * is `candidate`): a byte below 0x20 there is exactly a character below U+0020 in the text, so
 * when it has none the strings need no search for them.
 *
 * The grammar is JSON.parse's (ECMA-262 JSON.parse / ECMA-404): whitespace is only space, tab,
 * LF, CR (no BOM); strings hold no character below U+0020 and escape only `"\/bfnrt` and
 * `\uXXXX`; lone surrogates are text like any other; numbers are
 * `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`. The caller runs JSON.parse itself on a `false`,
 * for the message and as the final word, so a checker too strict only costs time; one too
 * lax would let bad input through, and test/unit/capture/json-check.test.ts holds the two to
 * the same verdict over generated and mutated documents.
 */
export function isJsonText(candidate: string, utf8?: Uint8Array): boolean {
  text = candidate;
  length = candidate.length;
  nextBackslash = -1;
  backslashFrom = 0;
  nextControl = -1;
  controlFrom = 0;
  controlsPossible = utf8 === undefined || hasControlByte(utf8);
  try {
    return check();
  } finally {
    text = '';
  }
}
