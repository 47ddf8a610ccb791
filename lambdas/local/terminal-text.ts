/**
 * Text a capture, a target or a folder name controls, made safe to print on a terminal. An
 * error code from a target such as `ESC ]0;PWNED BEL ESC [31m` would otherwise retitle the
 * terminal and colour what follows; a newline in a one-line value would forge a line of ours.
 * Every C0 and C1 control character (ESC, BEL, CR, ...), DEL, and the Unicode bidirectional
 * controls (which reorder what is shown: CVE-2021-42574) are shown escaped, `\x1b` or
 * `\u202e`, never interpreted. Escaping, not dropping: what the target sent stays readable.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const CONTROLS_AND_LINE_BREAKS =
  // eslint-disable-next-line no-control-regex -- as above
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

function escaped(char: string): string {
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** Text of several lines (a table): its line breaks and tabs kept, every other control escaped. */
export function terminalText(text: string): string {
  return text.replace(CONTROLS, escaped);
}

/** A one-line value (a name, an error type, a message): line breaks and tabs escaped too. */
export function terminalLine(text: string): string {
  return text.replace(CONTROLS_AND_LINE_BREAKS, escaped);
}
