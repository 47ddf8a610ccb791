/** The replay command's targets: `--url` (one) or `--target NAME=URL` (one or more). */
import { parseSageMakerTargetSpec, type SageMakerTargetSpec } from '../../adapters/sagemaker/target-spec';
import { stripUrlCredentials } from '../../core/redact';
import { targetNameProblem } from '../../core/target-name';

/** The name `--url`'s target takes without `--target-name`. */
export const DEFAULT_TARGET_NAME = 'target';

/** A target from the command line: an OpenAI-compatible base URL, or a SageMaker endpoint. */
export type CliTarget =
  | { name: string; kind: 'http'; url: URL }
  | { name: string; kind: 'sagemaker'; sagemaker: SageMakerTargetSpec; spec: string };

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
  if (options.url !== undefined && specs.length > 0)
    return 'give either --url (one target) or --target NAME=URL (one or more), not both';
  const pairs: [string, string, string][] =
    options.url !== undefined ? [[options.targetName, options.url, '--url']] : [];
  for (const spec of specs) {
    const at = spec.indexOf('=');
    const name = at < 0 ? '' : spec.slice(0, at);
    // `--target http://host` (or a URL whose query holds the first '='): the name was left out.
    if (at < 0 || /[:/?]/.test(name))
      return stripUrlCredentials(
        `--target ${spec}: the target's name is missing: --target NAME=URL, e.g. --target A=${spec}`,
      );
    pairs.push([name, spec.slice(at + 1), `--target ${name}`]);
  }
  if (pairs.length === 0) return 'give a target: --url <base-url>, or --target NAME=URL once per target';
  const out: CliTarget[] = [];
  for (const [name, raw, flag] of pairs) {
    const problem = targetNameProblem(name);
    if (problem)
      return options.url !== undefined
        ? `--target-name "${name}" ${problem}`
        : `target name "${name}" ${problem} (as NAME=URL, e.g. --target A=http://localhost:8000)`;
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
  const url = URL.canParse(raw) ? new URL(raw) : null;
  if (url && (url.protocol === 'http:' || url.protocol === 'https:')) return { name, kind: 'http', url };
  // `localhost:8000` parses with the scheme `localhost:`, `127.0.0.1:8000` not at all: both lack http://.
  const guess = !raw.includes('//') && URL.canParse(`http://${raw}`) ? `; did you mean http://${raw}?` : '';
  // The URL as typed may hold a password or a token: said without them.
  return stripUrlCredentials(
    `${flag} must be an http:// or https:// URL or sagemaker:<endpoint-name> (got ${raw}${guess})`,
  );
}
