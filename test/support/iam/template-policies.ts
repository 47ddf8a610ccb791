/**
 * The IAM statements a synthesized CloudFormation template gives one Lambda function, with
 * every intrinsic resolved against the resources a test emulates: what the function's role
 * would hold once CloudFormation had deployed the template there.
 *
 * Intrinsics: https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/intrinsic-function-reference.html
 * Pseudo parameters: https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/pseudo-parameter-reference.html
 * Anything else (Fn::If, Fn::ImportValue, an unknown logical id or attribute) throws.
 */
import type { PolicyStatement } from './policy-evaluator';

export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
}

export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
  Parameters?: Record<string, { Default?: unknown }>;
}

/** What a deployed resource answers to Ref and Fn::GetAtt, e.g. { Ref: url, Arn, QueueName, QueueUrl }. */
export type ResourceValues = { Ref: string } & Record<string, string>;

export interface Resolver {
  /** Logical id -> the emulated resource's values. */
  resources: Record<string, ResourceValues>;
  partition: string;
  region: string;
  accountId: string;
  urlSuffix?: string;
  stackName?: string;
}

function pseudo(name: string, r: Resolver): string | undefined {
  switch (name) {
    case 'AWS::Partition':
      return r.partition;
    case 'AWS::Region':
      return r.region;
    case 'AWS::AccountId':
      return r.accountId;
    case 'AWS::URLSuffix':
      return r.urlSuffix ?? 'amazonaws.com';
    case 'AWS::StackName':
      if (r.stackName === undefined) throw new Error('AWS::StackName used but the resolver has no stackName');
      return r.stackName;
    default:
      return undefined;
  }
}

function ref(name: string, t: CfnTemplate, r: Resolver): string {
  const p = pseudo(name, r);
  if (p !== undefined) return p;
  const values = r.resources[name];
  if (values) return values.Ref;
  const param = t.Parameters?.[name];
  if (param && typeof param.Default === 'string') return param.Default;
  throw new Error(`Ref ${name}: not a pseudo parameter, not in the resolver, not a parameter with a default`);
}

function getAtt(id: string, attribute: string, r: Resolver): string {
  const values = r.resources[id];
  if (!values) throw new Error(`Fn::GetAtt ${id}.${attribute}: ${id} is not in the resolver`);
  const v = values[attribute];
  if (v === undefined)
    throw new Error(
      `Fn::GetAtt ${id}.${attribute}: the resolver has no ${attribute} for ${id} (has ${Object.keys(values).join(', ')})`,
    );
  return v;
}

function asString(v: unknown, where: string): string {
  if (typeof v !== 'string') throw new Error(`${where}: expected a string, got ${JSON.stringify(v)}`);
  return v;
}

function asList(v: unknown, where: string): unknown[] {
  if (!Array.isArray(v)) throw new Error(`${where}: expected a list, got ${JSON.stringify(v)}`);
  return v;
}

/** Fn::Sub's ${Name}, ${Id.Attr}, ${!Literal}, with an optional variable map. */
function sub(template: string, vars: Record<string, unknown>, t: CfnTemplate, r: Resolver): string {
  return template.replace(/\$\{([^}]*)\}/g, (_, expr: string) => {
    if (expr.startsWith('!')) return `\${${expr.slice(1)}}`;
    if (Object.prototype.hasOwnProperty.call(vars, expr))
      return asString(resolveIntrinsics(vars[expr], t, r), `Fn::Sub variable ${expr}`);
    const dot = expr.indexOf('.');
    if (dot > 0 && !expr.startsWith('AWS::')) return getAtt(expr.slice(0, dot), expr.slice(dot + 1), r);
    return ref(expr, t, r);
  });
}

/** Resolves every intrinsic function in a value (deeply). */
export function resolveIntrinsics(value: unknown, t: CfnTemplate, r: Resolver): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveIntrinsics(v, t, r));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>);
  const [first] = entries;
  if (entries.length === 1 && first && (first[0] === 'Ref' || first[0].startsWith('Fn::'))) {
    const [fn, arg] = first;
    switch (fn) {
      case 'Ref':
        return ref(asString(arg, 'Ref'), t, r);
      case 'Fn::GetAtt': {
        const [id, attribute] =
          typeof arg === 'string'
            ? [arg.slice(0, arg.indexOf('.')), arg.slice(arg.indexOf('.') + 1)]
            : asList(arg, 'Fn::GetAtt');
        return getAtt(
          asString(id, 'Fn::GetAtt id'),
          asString(resolveIntrinsics(attribute, t, r), 'Fn::GetAtt attribute'),
          r,
        );
      }
      case 'Fn::Join': {
        const [delimiter, parts] = asList(arg, 'Fn::Join');
        const resolved = asList(resolveIntrinsics(parts, t, r), 'Fn::Join list');
        return resolved.map((p) => asString(p, 'Fn::Join part')).join(asString(delimiter, 'Fn::Join delimiter'));
      }
      case 'Fn::Select': {
        const [index, list] = asList(arg, 'Fn::Select');
        const items = asList(resolveIntrinsics(list, t, r), 'Fn::Select list');
        const i = Number(resolveIntrinsics(index, t, r));
        if (!Number.isInteger(i) || i < 0 || i >= items.length)
          throw new Error(`Fn::Select index ${String(index)} out of range (${items.length} items)`);
        return items[i];
      }
      case 'Fn::Split': {
        const [delimiter, source] = asList(arg, 'Fn::Split');
        return asString(resolveIntrinsics(source, t, r), 'Fn::Split source').split(
          asString(delimiter, 'Fn::Split delimiter'),
        );
      }
      case 'Fn::Sub': {
        if (typeof arg === 'string') return sub(arg, {}, t, r);
        const [text, vars] = asList(arg, 'Fn::Sub');
        return sub(asString(text, 'Fn::Sub template'), (vars ?? {}) as Record<string, unknown>, t, r);
      }
      default:
        throw new Error(`${fn} is not supported by this resolver`);
    }
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, resolveIntrinsics(v, t, r)]));
}

/** Logical ids of one resource type whose id starts with `prefix`. */
export function logicalIds(t: CfnTemplate, type: string, prefix = ''): string[] {
  return Object.entries(t.Resources)
    .filter(([id, res]) => res.Type === type && id.startsWith(prefix))
    .map(([id]) => id);
}

/** Exactly one logical id of a type with a prefix, or an error naming what was found. */
export function onlyLogicalId(t: CfnTemplate, type: string, prefix: string): string {
  const ids = logicalIds(t, type, prefix);
  if (ids.length !== 1)
    throw new Error(
      `expected one ${type} whose logical id starts with ${prefix}, found ${ids.length}: ${ids.join(', ')}`,
    );
  return ids[0]!;
}

function isRefTo(v: unknown, id: string): boolean {
  return typeof v === 'object' && v !== null && (v as { Ref?: unknown }).Ref === id;
}

function statementsOf(document: unknown, where: string): unknown[] {
  const statement = (document as { Statement?: unknown } | undefined)?.Statement;
  if (statement === undefined) throw new Error(`${where}: policy document without Statement`);
  return Array.isArray(statement) ? statement : [statement];
}

export interface FunctionPolicies {
  functionId: string;
  roleId: string;
  /** Every statement the role holds from the template, resolved. */
  statements: PolicyStatement[];
  /** statements[i] came from origins[i] (the policy's logical id, or role inline policy name). */
  origins: string[];
  /** Managed policies attached by ARN that are not in the template (e.g. AWS managed ones). */
  externalManagedPolicyArns: string[];
}

/**
 * The statements of the role of the Lambda function whose logical id starts with
 * `functionIdPrefix`: AWS::IAM::Policy and AWS::IAM::ManagedPolicy resources attached to the
 * role through Roles, the role's own inline Policies, and customer managed policies of the
 * template attached through ManagedPolicyArns. AWS managed policies are not in the template:
 * their ARNs are returned for the caller to judge.
 */
export function functionPolicies(t: CfnTemplate, functionIdPrefix: string, r: Resolver): FunctionPolicies {
  const functionId = onlyLogicalId(t, 'AWS::Lambda::Function', functionIdPrefix);
  const roleValue = t.Resources[functionId]!.Properties?.Role;
  const roleAtt = (roleValue as { 'Fn::GetAtt'?: unknown } | undefined)?.['Fn::GetAtt'];
  if (!Array.isArray(roleAtt) || roleAtt[1] !== 'Arn' || typeof roleAtt[0] !== 'string') {
    throw new Error(
      `${functionId}: Role is not Fn::GetAtt [<role>, Arn] of a role in this template ` +
        `(${JSON.stringify(roleValue)}); its policies cannot be read`,
    );
  }
  const roleId = roleAtt[0];
  const role = t.Resources[roleId];
  if (role?.Type !== 'AWS::IAM::Role') throw new Error(`${functionId}: ${roleId} is not an AWS::IAM::Role`);

  const statements: PolicyStatement[] = [];
  const origins: string[] = [];
  const add = (document: unknown, origin: string) => {
    for (const s of statementsOf(document, origin)) {
      statements.push(resolveIntrinsics(s, t, r) as PolicyStatement);
      origins.push(origin);
    }
  };

  for (const [id, res] of Object.entries(t.Resources)) {
    if (res.Type !== 'AWS::IAM::Policy' && res.Type !== 'AWS::IAM::ManagedPolicy') continue;
    const roles = (res.Properties?.Roles ?? []) as unknown[];
    if (roles.some((x) => isRefTo(x, roleId))) add(res.Properties?.PolicyDocument, id);
  }
  for (const p of (role.Properties?.Policies ?? []) as { PolicyName?: unknown; PolicyDocument?: unknown }[]) {
    add(p.PolicyDocument, `${roleId}/${String(p.PolicyName)}`);
  }
  const externalManagedPolicyArns: string[] = [];
  for (const arn of (role.Properties?.ManagedPolicyArns ?? []) as unknown[]) {
    const refId = (arn as { Ref?: unknown }).Ref;
    if (typeof refId === 'string' && t.Resources[refId]?.Type === 'AWS::IAM::ManagedPolicy') {
      // Attached by ARN rather than through its Roles: read it here unless already read.
      if (!origins.includes(refId)) add(t.Resources[refId]!.Properties?.PolicyDocument, refId);
      continue;
    }
    externalManagedPolicyArns.push(asString(resolveIntrinsics(arn, t, r), `${roleId} ManagedPolicyArns`));
  }
  if (role.Properties?.PermissionsBoundary !== undefined)
    throw new Error(`${roleId}: permissions boundaries are not evaluated by this reader`);
  return { functionId, roleId, statements, origins, externalManagedPolicyArns };
}

/** The function's environment variables, resolved: what the handler would read in Lambda. */
export function functionEnvironment(t: CfnTemplate, functionIdPrefix: string, r: Resolver): Record<string, string> {
  const functionId = onlyLogicalId(t, 'AWS::Lambda::Function', functionIdPrefix);
  const variables =
    (t.Resources[functionId]!.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)
      ?.Variables ?? {};
  return Object.fromEntries(
    Object.entries(variables).map(([k, v]) => [
      k,
      asString(resolveIntrinsics(v, t, r), `${functionId} environment ${k}`),
    ]),
  );
}
