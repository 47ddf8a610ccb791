/** The replay command's targets: `--url` (one) or `--target NAME=URL` (one or more). */
import { parseSageMakerTargetSpec, type SageMakerTargetSpec } from '../../adapters/sagemaker/target-spec';
import { isTargetName } from '../../core/target-name';

/** A target from the command line: an OpenAI-compatible base URL, or a SageMaker endpoint. */
export type CliTarget = { name: string; kind: 'http'; url: URL } | { name: string; kind: 'sagemaker'; sagemaker: SageMakerTargetSpec; spec: string };

export interface TargetFlags {
  /** One target: its base URL (named by `targetName`). Either this or `target`. */
  url?: string;
  /** Several targets: `NAME=URL` each, the first the baseline of the comparison. */
  target?: string[];
  targetName: string;
}

/**
 * `--url` (one target) or `--target NAME=URL` / `--target NAME=sagemaker:<endpoint>[?...]`
 * (one or more): the targets, or what is wrong.
 */
export function targetsOf(options: TargetFlags): CliTarget[] | string {
  const specs = options.target ?? [];
  if (options.url !== undefined && specs.length > 0) return 'give either --url (one target) or --target NAME=URL (one or more), not both';
  const pairs: [string, string][] =
    options.url !== undefined
      ? [[options.targetName, options.url]]
      : specs.map((spec) => {
          const at = spec.indexOf('=');
          return at < 0 ? ['', spec] : [spec.slice(0, at), spec.slice(at + 1)];
        });
  if (pairs.length === 0) return 'give a target: --url <base-url>, or --target NAME=URL once per target';
  const out: CliTarget[] = [];
  for (const [name, raw] of pairs) {
    const flag = options.url !== undefined ? '--url' : `--target ${name || '?'}`;
    if (!isTargetName(name)) return `target name "${name}" must be letters, digits, '.', '_' or '-' (as NAME=URL, e.g. --target A=http://localhost:8000)`;
    if (out.some((t) => t.name === name)) return `target name "${name}" is given twice`;
    const target = targetOf(name, raw, flag);
    if (typeof target === 'string') return target;
    out.push(target);
  }
  return out;
}

/** One `NAME=URL` (or `--url`'s URL), or what is wrong with its URL. */
function targetOf(name: string, raw: string, flag: string): CliTarget | string {
  if (raw.startsWith('sagemaker:')) {
    const sagemaker = parseSageMakerTargetSpec(raw);
    if (typeof sagemaker === 'string') return `${flag}: ${sagemaker}`;
    return { name, kind: 'sagemaker', sagemaker, spec: raw };
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${flag}: not a URL: ${raw} (an OpenAI-compatible base URL, or sagemaker:<endpoint-name>)`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `${flag} must be an http:// or https:// URL or sagemaker:<endpoint-name> (got ${raw}${raw.includes('//') ? '' : `; did you mean http://${raw}?`})`;
  }
  return { name, kind: 'http', url };
}
