/**
 * IAM identity-policy evaluation, as AWS does it for the statements of one principal's
 * identity-based policies (no resource policies, SCPs, boundaries or session policies):
 * an explicit Deny wins; otherwise an Allow is needed; otherwise the request is implicitly
 * denied. https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html
 *
 * Strict on purpose: anything this evaluator does not implement (an unknown condition
 * operator, a set operator, a policy variable, a Principal in an identity policy) throws
 * instead of being skipped, so a policy can never pass a test by being misunderstood.
 */
import type { AwsCall } from './aws-call-recorder';

type OneOrMany = string | string[];
export type ConditionValue = string | number | boolean;
export type ConditionBlock = Record<string, Record<string, ConditionValue | ConditionValue[]>>;

export interface PolicyStatement {
  Sid?: string;
  Effect: 'Allow' | 'Deny';
  Action?: OneOrMany;
  NotAction?: OneOrMany;
  Resource?: OneOrMany;
  NotResource?: OneOrMany;
  Condition?: ConditionBlock;
}

export type Decision = 'allowed' | 'implicit-deny' | 'explicit-deny';

/** What the evaluator needs of a call: the action, the resource ARN, the request context. */
export type Request = Pick<AwsCall, 'action' | 'resource' | 'context'>;

const STATEMENT_KEYS = new Set(['Sid', 'Effect', 'Action', 'NotAction', 'Resource', 'NotResource', 'Condition']);

const list = (v: OneOrMany): string[] => (Array.isArray(v) ? v : [v]);

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** `*` any run of characters, `?` exactly one: for actions and string conditions. */
function globRegExp(pattern: string, flags = ''): RegExp {
  let source = '';
  for (const ch of pattern) source += ch === '*' ? '.*' : ch === '?' ? '.' : escapeRegExp(ch);
  return new RegExp(`^${source}$`, flags + 's');
}

function noPolicyVariables(where: string, value: string): void {
  // ${aws:username} and friends are not implemented: refusing beats silently mismatching.
  if (value.includes('${')) throw new Error(`${where}: policy variables are not supported by this evaluator: ${value}`);
}

/**
 * Actions: `service:Name`, case-insensitive, with `*` and `?`.
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_action.html
 */
export function actionMatches(pattern: string, action: string): boolean {
  if (pattern === '*') return true;
  if (!/^[A-Za-z0-9-]+:[A-Za-z0-9*?]+$/.test(pattern))
    throw new Error(`not an IAM action pattern: ${JSON.stringify(pattern)}`);
  return globRegExp(pattern, 'i').test(action);
}

/**
 * Resources: case-sensitive ARN patterns. Wildcards work within an ARN segment (the parts
 * separated by colons) and match `/`; a `*` that is the last character of a segment may
 * expand beyond the colon boundaries. `*` alone matches every resource.
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_resource.html
 */
export function resourceMatches(pattern: string, resource: string): boolean {
  noPolicyVariables('Resource', pattern);
  if (pattern === '*') return true;
  if (!pattern.startsWith('arn:')) throw new Error(`not an ARN pattern: ${JSON.stringify(pattern)}`);
  let source = '';
  const chars = [...pattern];
  chars.forEach((ch, i) => {
    if (ch === '*') {
      const next = chars[i + 1];
      source += next === undefined || next === ':' ? '.*' : '[^:]*';
    } else if (ch === '?') source += '[^:]';
    else source += escapeRegExp(ch);
  });
  return new RegExp(`^${source}$`, 's').test(resource);
}

/** The six colon-delimited components of an ARN (the last keeps any further colons). */
function arnParts(arn: string): string[] | null {
  const parts = arn.split(':');
  if (parts.length < 6 || parts[0] !== 'arn') return null;
  return [...parts.slice(0, 5), parts.slice(5).join(':')];
}

/**
 * ArnEquals / ArnLike: case-sensitive; each of the six colon-delimited components is checked
 * separately and may carry `*` and `?`.
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html#Conditions_ARN
 */
function arnLike(pattern: string, value: string): boolean {
  const p = arnParts(pattern);
  const v = arnParts(value);
  if (!p || !v) return false;
  return p.every((part, i) => globRegExp(part).test(v[i]!));
}

type Matcher = (policyValue: string, requestValue: string) => boolean;

/**
 * The implemented operators. `negated` operators combine their values with NOR, the rest
 * with OR; a key missing from the request makes a positive operator false and a negated
 * one true (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_multi-value-conditions.html
 * and the "Important" note on the condition-operators page).
 */
const OPERATORS: Record<string, { match: Matcher; negated: boolean }> = {
  StringEquals: { match: (p, v) => p === v, negated: false },
  StringNotEquals: { match: (p, v) => p === v, negated: true },
  StringLike: { match: (p, v) => globRegExp(p).test(v), negated: false },
  StringNotLike: { match: (p, v) => globRegExp(p).test(v), negated: true },
  ArnEquals: { match: arnLike, negated: false },
  ArnLike: { match: arnLike, negated: false },
  ArnNotEquals: { match: arnLike, negated: true },
  ArnNotLike: { match: arnLike, negated: true },
  Bool: { match: (p, v) => p.toLowerCase() === v.toLowerCase(), negated: false },
};

function conditionHolds(
  operatorName: string,
  key: string,
  policyValues: ConditionValue[],
  context: Record<string, string>,
): boolean {
  if (operatorName.includes(':'))
    throw new Error(`set operators (${operatorName}) are not supported by this evaluator`);
  // Condition key names are not case-sensitive (aws:SourceIp = AWS:SourceIP); values depend on the operator.
  // https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition.html
  const contextKey = Object.keys(context).find((k) => k.toLowerCase() === key.toLowerCase());
  const requestValue = contextKey === undefined ? undefined : context[contextKey];
  const values = policyValues.map((v) => String(v));
  for (const v of values) noPolicyVariables(`Condition ${operatorName} ${key}`, v);
  if (operatorName === 'Null') {
    // Null: "true" means the key must be absent, "false" that it must be present.
    return values.some((v) => (v.toLowerCase() === 'true') === (requestValue === undefined));
  }
  const ifExists = operatorName.endsWith('IfExists');
  const base = ifExists ? operatorName.slice(0, -'IfExists'.length) : operatorName;
  const operator = OPERATORS[base];
  if (!operator) throw new Error(`condition operator ${operatorName} is not implemented by this evaluator`);
  if (requestValue === undefined) return ifExists || operator.negated;
  const anyMatch = values.some((v) => operator.match(v, requestValue));
  return operator.negated ? !anyMatch : anyMatch;
}

/** Every operator, every key: AND. https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_multi-value-conditions.html */
export function conditionsHold(condition: ConditionBlock | undefined, context: Record<string, string>): boolean {
  if (condition === undefined) return true;
  // Evaluate all of them (no short cut), so an unsupported operator throws even after a false one.
  const results = Object.entries(condition).flatMap(([operatorName, keys]) =>
    Object.entries(keys).map(([key, values]) =>
      conditionHolds(operatorName, key, Array.isArray(values) ? values : [values], context),
    ),
  );
  return results.every(Boolean);
}

export function validateStatement(s: PolicyStatement, where = 'statement'): void {
  const raw = s as unknown as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (!STATEMENT_KEYS.has(key))
      throw new Error(
        `${where}: ${key} is not an identity-policy statement element (Principal belongs in resource policies)`,
      );
  }
  if (s.Effect !== 'Allow' && s.Effect !== 'Deny')
    throw new Error(`${where}: Effect must be Allow or Deny, got ${JSON.stringify(s.Effect)}`);
  if ((s.Action === undefined) === (s.NotAction === undefined))
    throw new Error(`${where}: exactly one of Action and NotAction is required`);
  if ((s.Resource === undefined) === (s.NotResource === undefined))
    throw new Error(`${where}: exactly one of Resource and NotResource is required`);
  for (const v of [s.Action, s.NotAction, s.Resource, s.NotResource]) {
    if (v !== undefined && !list(v).every((x) => typeof x === 'string'))
      throw new Error(`${where}: unresolved (non-string) value in ${JSON.stringify(v)}`);
  }
}

/** Whether one statement applies to the request: action, resource and condition all match. */
export function statementApplies(s: PolicyStatement, request: Request): boolean {
  validateStatement(s);
  const actionOk =
    s.Action !== undefined
      ? list(s.Action).some((p) => actionMatches(p, request.action))
      : !list(s.NotAction!).some((p) => actionMatches(p, request.action));
  const resourceOk =
    s.Resource !== undefined
      ? list(s.Resource).some((p) => resourceMatches(p, request.resource))
      : !list(s.NotResource!).some((p) => resourceMatches(p, request.resource));
  // Conditions are evaluated even when the rest does not match, so that a statement with an
  // unsupported operator fails every test that reads it, not only those it would apply to.
  const conditionOk = conditionsHold(s.Condition, request.context);
  return actionOk && resourceOk && conditionOk;
}

function assertResolved(request: Request): void {
  if ('resourceIsName' in request && (request as AwsCall).resourceIsName) {
    throw new Error(`${request.action} on ${request.resource}: the resource is a name, not an ARN; resolve it first`);
  }
}

export function evaluate(statements: PolicyStatement[], call: Request): Decision {
  assertResolved(call);
  let allowed = false;
  let denied = false;
  statements.forEach((s, i) => {
    validateStatement(s, `statement ${i}`);
    if (!statementApplies(s, call)) return;
    if (s.Effect === 'Deny') denied = true;
    else allowed = true;
  });
  if (denied) return 'explicit-deny';
  return allowed ? 'allowed' : 'implicit-deny';
}

/** The indices of the statements that apply to a call, by effect. */
export function explain(statements: PolicyStatement[], call: Request): { allowedBy: number[]; deniedBy: number[] } {
  assertResolved(call);
  const allowedBy: number[] = [];
  const deniedBy: number[] = [];
  statements.forEach((s, i) => {
    if (statementApplies(s, call)) (s.Effect === 'Deny' ? deniedBy : allowedBy).push(i);
  });
  return { allowedBy, deniedBy };
}

export interface UnusedGrant {
  statement: number;
  sid?: string;
  /** An Action pattern no call needed, or the whole NotAction list as one entry. */
  action?: string;
  /** A Resource pattern no call needed, or the whole NotResource list as one entry. */
  resource?: string;
}

/**
 * The Allow statements' action (or resource) patterns that no call used: a pattern is used
 * when a call's action (resource) matches it and the statement (resource, condition) applies
 * to that call. A NotAction (NotResource) statement is one entry, used if it applied to any
 * call. Deny statements are guardrails, not grants, and are not listed.
 */
function unusedGrants(statements: PolicyStatement[], calls: Request[], kind: 'action' | 'resource'): UnusedGrant[] {
  const out: UnusedGrant[] = [];
  statements.forEach((s, i) => {
    validateStatement(s, `statement ${i}`);
    if (s.Effect !== 'Allow') return;
    const applying = calls.filter((c) => statementApplies(s, c));
    const sid = s.Sid !== undefined ? { sid: s.Sid } : {};
    const negated = kind === 'action' ? s.NotAction : s.NotResource;
    if (negated !== undefined) {
      if (applying.length === 0)
        out.push({
          statement: i,
          ...sid,
          [kind]: `${kind === 'action' ? 'NotAction' : 'NotResource'} ${JSON.stringify(negated)}`,
        });
      return;
    }
    const matches = (pattern: string, c: Request) =>
      kind === 'action' ? actionMatches(pattern, c.action) : resourceMatches(pattern, c.resource);
    for (const pattern of list((kind === 'action' ? s.Action : s.Resource)!)) {
      if (!applying.some((c) => matches(pattern, c))) out.push({ statement: i, ...sid, [kind]: pattern });
    }
  });
  return out;
}

export const unusedActions = (statements: PolicyStatement[], calls: Request[]): UnusedGrant[] =>
  unusedGrants(statements, calls, 'action');

export const unusedResources = (statements: PolicyStatement[], calls: Request[]): UnusedGrant[] =>
  unusedGrants(statements, calls, 'resource');

export interface StatementNeed {
  statement: number;
  sid?: string;
  /** True when removing this statement denies at least one call the full set allows. */
  required: boolean;
  /** Those calls. */
  deniedWithout: Request[];
}

/** For each statement: which calls, allowed by the full set, would be denied without it. */
export function requiredStatements(statements: PolicyStatement[], calls: Request[]): StatementNeed[] {
  const allowedNow = calls.filter((c) => evaluate(statements, c) === 'allowed');
  return statements.map((s, i) => {
    const without = statements.filter((_, j) => j !== i);
    const deniedWithout = allowedNow.filter((c) => evaluate(without, c) !== 'allowed');
    return {
      statement: i,
      ...(s.Sid !== undefined ? { sid: s.Sid } : {}),
      required: deniedWithout.length > 0,
      deniedWithout,
    };
  });
}
