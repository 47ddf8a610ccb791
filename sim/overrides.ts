/**
 * `--set path=value`: what-if overrides of any leaf of the simulator's settings
 * (sim/settings.ts), each checked for its type here and for its range by validateSettings
 * (sim/setting-ranges.ts).
 */
import { NULLABLE, SettingsError } from './setting-ranges';
import type { SimSettings } from './settings';

type Leaf = number | string | boolean | null;

/**
 * `path=value` overrides (`aws.esm.growthPerMinute=1000`, `stack.fire.batchSize=4`): the path
 * must name an existing leaf and the value must have its type (a number, a string, true/false,
 * or null where the leaf may be null). Every problem is reported at once.
 */
export function applyOverrides(settings: SimSettings, overrides: readonly string[]): SimSettings {
  const copy = structuredClone(settings);
  const problems: string[] = [];
  for (const o of overrides) {
    const eq = o.indexOf('=');
    if (eq <= 0) {
      problems.push(`--set ${o}: expected path=value`);
      continue;
    }
    const path = o.slice(0, eq).split('.');
    const text = o.slice(eq + 1);
    let node: Record<string, unknown> = copy as unknown as Record<string, unknown>;
    for (const key of path.slice(0, -1)) {
      const next = node[key];
      if (next === null || typeof next !== 'object') {
        node = {};
        break;
      }
      node = next as Record<string, unknown>;
    }
    const key = path.at(-1) as string;
    if (!Object.hasOwn(node, key) || (typeof node[key] === 'object' && node[key] !== null)) {
      problems.push(`--set ${o}: ${path.join('.')} is not a setting (see docs/simulator.md)`);
      continue;
    }
    const nullable = NULLABLE.has(path.join('.'));
    const value = parseLeaf(text, node[key] as Leaf, nullable);
    if (value === undefined)
      problems.push(
        `--set ${o}: ${path.join('.')} takes a ${node[key] === null ? 'number' : typeof node[key]}${nullable ? ' or null' : ''}`,
      );
    else node[key] = value;
  }
  if (problems.length > 0) throw new SettingsError(problems.join('\n'));
  return copy;
}

function parseLeaf(text: string, current: Leaf, nullable: boolean): Leaf | undefined {
  if (text === 'null') return nullable ? null : undefined;
  if (typeof current === 'number' || current === null) {
    const n = Number(text);
    return text.trim() !== '' && Number.isFinite(n) ? n : undefined;
  }
  if (typeof current === 'boolean') return text === 'true' ? true : text === 'false' ? false : undefined;
  return text;
}
