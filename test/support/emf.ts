/**
 * CloudWatch's embedded metric format, as its specification requires a document to be
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html):
 * the JSON schema it publishes (test/fixtures/cloudwatch/emf-schema.json, read with zod's JSON
 * Schema reader), and the rules its text adds that the schema cannot say. And what the
 * documents define: the metrics CloudWatch extracts from them, by namespace, name and
 * dimension set.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { REPO_ROOT } from './processes';

const schema = z.fromJSONSchema(
  JSON.parse(readFileSync(join(REPO_ROOT, 'test/fixtures/cloudwatch/emf-schema.json'), 'utf8')) as Parameters<
    typeof z.fromJSONSchema
  >[0],
);

interface Directive {
  Namespace: string;
  Dimensions: string[][];
  Metrics: { Name: string; Unit?: string }[];
}

/** Everything wrong with a document by the specification; [] when it is a valid EMF document. */
export function emfProblems(doc: unknown, text = JSON.stringify(doc)): string[] {
  const parsed = schema.safeParse(doc);
  if (!parsed.success) return parsed.error.issues.map((i) => `schema: ${i.path.join('.')}: ${i.message}`);
  const problems: string[] = [];
  const root = doc as Record<string, unknown> & { _aws: { CloudWatchMetrics: Directive[] } };
  // "The embedded metric format is subject to the same limits as standard CloudWatch Logs events" (256 KB in the schema's version).
  if (Buffer.byteLength(text) > 256 * 1024)
    problems.push(`${Buffer.byteLength(text)} bytes: above a log event's 256 KB`);
  for (const d of root._aws.CloudWatchMetrics) {
    // "This array MUST NOT contain more than 100 MetricDefinition objects."
    if (d.Metrics.length > 100) problems.push(`${d.Metrics.length} metrics in one directive: at most 100`);
    // "The values within this array MUST also be members on the root-node"; "A dimension target MUST have a string value."
    for (const key of d.Dimensions.flat())
      if (typeof root[key] !== 'string' || (root[key] as string).trim() === '')
        problems.push(`dimension ${key}: not a string member of the root`);
    // "A metric target MUST be a numeric value or an array of numeric values", at most 100 of them.
    for (const { Name } of d.Metrics) {
      const v = root[Name];
      const ok =
        (typeof v === 'number' && Number.isFinite(v)) ||
        (Array.isArray(v) && v.length <= 100 && v.every((x) => typeof x === 'number' && Number.isFinite(x)));
      if (!ok) problems.push(`metric ${Name}: not a number (or an array of at most 100) on the root`);
    }
  }
  return problems;
}

/**
 * A metric CloudWatch extracts: namespace, name and the dimensions' names (sorted), e.g.
 * `capture-replay|Verdict|Metric,Schedule,Stack,Target`.
 */
export type MetricIdentity = string;

export const identityOf = (namespace: string, name: string, dimensions: readonly string[]): MetricIdentity =>
  `${namespace}|${name}|${[...dimensions].sort().join(',')}`;

/** Every metric the documents define (each metric once per dimension set). */
export function metricIdentities(docs: readonly unknown[]): Set<MetricIdentity> {
  const out = new Set<MetricIdentity>();
  for (const doc of docs) {
    for (const d of (doc as { _aws: { CloudWatchMetrics: Directive[] } })._aws.CloudWatchMetrics) {
      for (const set of d.Dimensions) for (const m of d.Metrics) out.add(identityOf(d.Namespace, m.Name, set));
    }
  }
  return out;
}

/** The JSON lines of printed text that are EMF documents (an `_aws` member), parsed. */
export function emfLines(printed: readonly string[]): Record<string, unknown>[] {
  return printed
    .flatMap((text) => text.split('\n'))
    .filter((line) => line.startsWith('{') && line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
