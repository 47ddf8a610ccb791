/**
 * Setup file of the main project, whose files share a worker (`isolate: false` in vitest.config.ts)
 * and set environment variables: a file that leaves `process.env` changed fails, naming the
 * variables, before the next file in its worker runs in that environment.
 */
import { afterAll } from 'vitest';

const before = { ...process.env };

/**
 * Set by a package when it is first loaded, once per process, whichever file loads it:
 * Powertools' commons adds its user agent (PT/...) to AWS_SDK_UA_APP_ID.
 */
const SET_BY_PACKAGES_ON_LOAD = new Set(['AWS_SDK_UA_APP_ID']);

/** The variables `after` adds, removes or changes against `before`, but those packages set on load. */
export function changedVariables(before: NodeJS.ProcessEnv, after: NodeJS.ProcessEnv): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names].filter((name) => before[name] !== after[name] && !SET_BY_PACKAGES_ON_LOAD.has(name)).sort();
}

afterAll(() => {
  const changed = changedVariables(before, process.env);
  if (changed.length > 0)
    throw new Error(
      `this file left process.env changed (${changed.join(', ')}); ` +
        'the next file in its worker would run with it: put it back in afterAll/afterEach',
    );
});
