/**
 * The command line's spelling of a SageMaker target:
 * `sagemaker:<endpoint-name>?variant=AllTraffic&component=c&region=us-east-1&container=h&attributes=...`
 *
 * Every parameter is optional; values are percent-decoded (`decodeURIComponent`: `+` stays a
 * plus, so custom attributes keep theirs; write `%26` for a literal `&`). Names are checked
 * against SageMaker's own constraints, so a typo fails at start-up instead of as a
 * ValidationError on every request.
 */

export interface SageMakerTargetSpec {
  endpointName: string;
  region?: string;
  targetVariant?: string;
  inferenceComponentName?: string;
  targetContainerHostname?: string;
  customAttributes?: string;
}

const PREFIX = 'sagemaker:';
/**
 * EndpointName, TargetVariant, TargetContainerHostname: `^[a-zA-Z0-9](-*[a-zA-Z0-9])*`, at
 * most 63 (SAGEMAKER_NAME_MAX). Shared with the deployment configuration (runtime/config.ts).
 */
export const RESOURCE_NAME = /^[a-zA-Z0-9](-*[a-zA-Z0-9])*$/;
/** InferenceComponentName: `^[a-zA-Z0-9]([\-a-zA-Z0-9]*[a-zA-Z0-9])?$`, at most 63. */
export const COMPONENT_NAME = /^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/;
export const SAGEMAKER_NAME_MAX = 63;
/** us-east-1, eu-central-2, us-gov-west-1, cn-north-1, us-isob-east-1, ... */
export const REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;
/** CustomAttributes: `\p{ASCII}*`, at most 1024 characters. */
export const ASCII = /^\p{ASCII}*$/u;
export const CUSTOM_ATTRIBUTES_MAX = 1024;

const PARAMS = {
  variant: 'targetVariant',
  component: 'inferenceComponentName',
  region: 'region',
  container: 'targetContainerHostname',
  attributes: 'customAttributes',
} as const;
type Param = keyof typeof PARAMS;

function checkName(what: string, value: string, pattern: RegExp): string | null {
  if (value.length > SAGEMAKER_NAME_MAX) return `${what} "${value}" is longer than 63 characters`;
  if (!pattern.test(value))
    return `${what} "${value}" is not a valid name (letters, digits and hyphens, starting and ending with a letter or digit)`;
  return null;
}

/** The spec as options for createSageMakerTarget, or an error message for the user. */
export function parseSageMakerTargetSpec(spec: string): SageMakerTargetSpec | string {
  if (!spec.startsWith(PREFIX)) return `a SageMaker target starts with "${PREFIX}" (got "${spec}")`;
  const rest = spec.slice(PREFIX.length);
  const q = rest.indexOf('?');
  const name = q < 0 ? rest : rest.slice(0, q);
  const query = q < 0 ? '' : rest.slice(q + 1);
  if (name === '') return `no endpoint name in "${spec}": expected sagemaker:<endpoint-name>`;
  const nameError = checkName('endpoint name', name, RESOURCE_NAME);
  if (nameError) return nameError;
  const out: SageMakerTargetSpec = { endpointName: name };
  const seen = new Set<string>();
  for (const pair of query === '' ? [] : query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq);
    if (!(key in PARAMS)) return `unknown parameter "${key}" in "${spec}" (known: ${Object.keys(PARAMS).join(', ')})`;
    if (seen.has(key)) return `parameter "${key}" given twice in "${spec}"`;
    seen.add(key);
    let value: string;
    try {
      value = decodeURIComponent(eq < 0 ? '' : pair.slice(eq + 1));
    } catch {
      return `parameter "${key}" is not valid percent-encoding in "${spec}"`;
    }
    if (value === '') return `parameter "${key}" has no value in "${spec}"`;
    const param = key as Param;
    if (param === 'variant' || param === 'container') {
      const error = checkName(param === 'variant' ? 'variant' : 'container hostname', value, RESOURCE_NAME);
      if (error) return error;
    } else if (param === 'component') {
      const error = checkName('inference component', value, COMPONENT_NAME);
      if (error) return error;
    } else if (param === 'region') {
      if (!REGION.test(value)) return `region "${value}" is not an AWS region name (e.g. us-east-1)`;
    } else if (value.length > CUSTOM_ATTRIBUTES_MAX || !ASCII.test(value)) {
      return 'custom attributes must be ASCII, at most 1024 characters';
    }
    out[PARAMS[param]] = value;
  }
  return out;
}
