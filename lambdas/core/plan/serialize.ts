/**
 * The re-serialization of an overridden body (plan.ts rule 5): JSON.stringify's text, at any
 * depth. V8's stringify recurses and its parse does not, so a body nested thousands of levels
 * deep parses and then cannot be written back by stringify alone.
 */

/**
 * JSON.stringify of a value from JSON.parse, without recursion: the same text, at any depth.
 * Values from JSON.parse are only objects (own keys in Object.keys order, as stringify takes
 * them), arrays, strings, finite or infinite numbers, booleans and null; primitives go
 * through JSON.stringify itself, so escapes and numbers are its own.
 */
export function stringifyDeep(value: unknown): string {
  const out: string[] = [];
  // Work items: a value to write, or literal text (separators, closing brackets).
  const stack: ({ text: string } | { value: unknown })[] = [{ value }];
  while (stack.length > 0) {
    const item = stack.pop() as { text: string } | { value: unknown };
    if ('text' in item) {
      out.push(item.text);
      continue;
    }
    const v = item.value;
    if (Array.isArray(v)) {
      out.push('[');
      stack.push({ text: ']' });
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ value: v[i] === undefined ? null : v[i] });
        if (i > 0) stack.push({ text: ',' });
      }
    } else if (typeof v === 'object' && v !== null) {
      const obj = v as Record<string, unknown>;
      const keys = Object.keys(obj).filter((k) => obj[k] !== undefined);
      out.push('{');
      stack.push({ text: '}' });
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string;
        stack.push({ value: obj[key] });
        stack.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(key)}:` });
      }
    } else out.push(JSON.stringify(v) ?? 'null');
  }
  return out.join('');
}

/** JSON.stringify, or the same text from `stringifyDeep` when the value is nested too deep for it. */
export function serialize(value: Record<string, unknown>): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return stringifyDeep(value);
  }
}
