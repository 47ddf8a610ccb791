/**
 * A schedule's expression as EventBridge Scheduler takes it, checked when the deployment
 * configuration is read (synth), so that an expression the Scheduler refuses, or one it would
 * never run, is a line naming the field and the rule instead of a failed deploy. The syntax:
 * https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html; the rules of
 * each form are beside their checks (rateProblems, cronProblems).
 *
 * Written here rather than taken from a package: the rules are a few lines, and the messages
 * name our configuration's fields.
 */

interface CronField {
  name: string;
  min: number;
  max: number;
  /** Names a value may be written as (JAN = 1, SUN = 1). */
  names?: readonly string[];
  /** `/` increments allowed. */
  step: boolean;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

const FIELDS: readonly CronField[] = [
  { name: 'minutes', min: 0, max: 59, step: true },
  { name: 'hours', min: 0, max: 23, step: true },
  { name: 'day-of-month', min: 1, max: 31, step: true },
  { name: 'month', min: 1, max: 12, names: MONTHS, step: true },
  { name: 'day-of-week', min: 1, max: 7, names: DAYS, step: false },
  { name: 'year', min: 1970, max: 2199, step: true },
];

const FORMS =
  'cron(minutes hours day-of-month month day-of-week year) or rate(<n> minute(s)|hour(s)|day(s)), as EventBridge Scheduler takes them';

/** A value of the field (a number in range, or one of its names), or null. */
function valueOf(raw: string, f: CronField): number | null {
  const named = f.names?.indexOf(raw.toUpperCase()) ?? -1;
  if (named >= 0) return named + 1;
  if (!/^\d{1,4}$/.test(raw)) return null;
  const n = Number(raw);
  return n >= f.min && n <= f.max ? n : null;
}

/** What is wrong with one comma-separated item of a field; null when it is fine. */
function itemProblem(item: string, f: CronField): string | null {
  if (item === '*') return null;
  if (f.name === 'day-of-month' && /^(L|LW|\d{1,2}W)$/i.test(item))
    return /^\d/.test(item) && valueOf(item.slice(0, -1), f) === null ? `${item}: W takes a day 1-31` : null;
  if (f.name === 'day-of-week') {
    const last = /^(\w+)?L$/i.exec(item);
    if (last)
      return last[1] === undefined || valueOf(last[1], f) !== null ? null : `${item}: L takes a day 1-7 or SUN-SAT`;
    const nth = /^(\w+)#(\d)$/.exec(item);
    if (nth)
      return valueOf(nth[1] as string, f) !== null && Number(nth[2]) >= 1 && Number(nth[2]) <= 5
        ? null
        : `${item}: <day>#<1-5>, e.g. 3#2 for the second Tuesday`;
  }
  const [range, step, ...extra] = item.split('/');
  if (extra.length > 0) return `${item}: one / at most`;
  if (step !== undefined) {
    if (!f.step) return `${item}: / is not taken in ${f.name}`;
    if (!/^\d+$/.test(step) || Number(step) < 1 || Number(step) > f.max - f.min + 1)
      return `${item}: the increment after / must be 1-${f.max - f.min + 1}`;
  }
  if (range === '*' && step !== undefined) return null;
  const bounds = (range as string).split('-');
  if (bounds.length > 2 || bounds.some((b) => valueOf(b, f) === null))
    return `${item}: ${f.name} takes ${f.min}-${f.max}${f.names ? ` or ${f.names[0]}-${f.names[f.names.length - 1]}` : ''}`;
  return null;
}

/**
 * `cron(minutes hours day-of-month month day-of-week year)`: six fields; minutes 0-59,
 * hours 0-23, day-of-month 1-31, month 1-12 or JAN-DEC, day-of-week 1-7 or SUN-SAT, year
 * 1970-2199; wildcards `, - * /` in each, `?` in the two day fields, `L` and `W` in
 * day-of-month, `L` and `#` in day-of-week; day-of-month and day-of-week not both given
 * (one of them `?`). The cron reference:
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-cron-expressions.html
 */
function cronProblems(expression: string, body: string): string[] {
  const fields = body.trim().split(/\s+/);
  if (fields.length !== 6)
    return [
      `${expression}: a cron takes six fields (minutes hours day-of-month month day-of-week year), got ${fields.length}`,
    ];
  const problems: string[] = [];
  fields.forEach((field, i) => {
    const f = FIELDS[i] as CronField;
    if (field === '?') {
      if (f.name !== 'day-of-month' && f.name !== 'day-of-week')
        problems.push(`${expression}: ? is taken only in day-of-month and day-of-week, not ${f.name}`);
      return;
    }
    const items = field.split(',');
    if (f.name === 'day-of-week' && items.length > 1 && field.includes('#'))
      problems.push(`${expression}: day-of-week with # takes one expression (${field})`);
    for (const item of items) {
      const problem = itemProblem(item, f);
      if (problem) problems.push(`${expression}: ${f.name} ${problem}`);
    }
  });
  const [, , dom, , dow] = fields;
  if ((dom === '?') === (dow === '?')) {
    problems.push(
      `${expression}: exactly one of day-of-month and day-of-week must be ? (e.g. cron(0 2 * * ? *) every ` +
        `day at 02:00, cron(0 2 ? * MON-FRI *) on weekdays)`,
    );
  }
  return problems;
}

/**
 * `rate(value unit)`: a positive whole number and minute(s), hour(s) or day(s); the unit
 * singular when the value is 1, plural above (EventBridge's rate reference,
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rate-expressions.html:
 * "rate(1 hours) and rate(5 hour) aren't valid").
 */
function rateProblems(expression: string, body: string): string[] {
  const m = /^(\d+) (minute|minutes|hour|hours|day|days)$/.exec(body);
  if (!m) return [`${expression}: rate(<n> <unit>) with a whole number n and minute(s), hour(s) or day(s)`];
  const value = Number(m[1]);
  const unit = m[2] as string;
  if (value < 1) return [`${expression}: the value must be 1 or more`];
  const plural = unit.endsWith('s');
  if (value === 1 && plural) return [`${expression}: write rate(1 ${unit.slice(0, -1)}) (the unit is singular for 1)`];
  if (value > 1 && !plural) return [`${expression}: write rate(${value} ${unit}s) (the unit is plural above 1)`];
  return [];
}

/** Every problem with a schedule expression, one line each; empty when EventBridge Scheduler takes it. */
export function scheduleExpressionProblems(expression: string): string[] {
  const m = /^(cron|rate)\((.*)\)$/.exec(expression);
  if (!m) return [`${JSON.stringify(expression)} is not ${FORMS}`];
  return m[1] === 'cron' ? cronProblems(expression, m[2] as string) : rateProblems(expression, m[2] as string);
}
