#!/usr/bin/env node
/**
 * Runs one deployed Lambda bundle the way the Node.js runtime does, in this fresh process:
 * loads the handler module named by the function's Handler setting (`index.handler`) from
 * the asset directory, invokes the export with the event read from stdin and a minimal
 * Lambda context, and writes ONE JSON line with the outcome (report()) to file descriptor 3
 * (so stdout and stderr stay the function's own logs), then exits, as Lambda freezes after a response.
 *
 *   node test/support/invoke-bundle.mjs <assetDir> <module.export> [--timeout-seconds N] < event.json 3>result.json
 *   node test/support/invoke-bundle.mjs <assetDir> <module.export> --load-only 3>&1    # load time only
 *
 * Plain Node on purpose (no tsx, no test framework): nothing but Node may help the bundle load.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const bootMs = performance.now();
const args = process.argv.slice(2);
const [assetDir, handlerSetting] = args;
const loadOnly = args.includes('--load-only');
const timeoutIndex = args.indexOf('--timeout-seconds');
const timeoutSeconds = timeoutIndex >= 0 ? Number(args[timeoutIndex + 1]) : 900;

/**
 * Writes the outcome line and exits, 0 or 1. The outcome:
 * {"ok":true,"response":...,"bootMs","loadMs","invokeMs","modules":[...]} or
 * {"ok":false,"phase":"load"|"invoke","errorType","errorMessage","stack",...}, each with cpuMs.
 * bootMs: Node start to this script's first line; loadMs: require() of the bundle; cpuMs:
 * the process's CPU time (user + system) up to the report, Node's start-up included; modules:
 * the CommonJS files loaded from disk during the run (a self-contained bundle loads only
 * itself; anything else was resolved outside it).
 */
function report(outcome) {
  const cpu = process.cpuUsage();
  const line = JSON.stringify({ ...outcome, cpuMs: (cpu.user + cpu.system) / 1000 }) + '\n';
  try {
    writeSync(3, line);
  } catch {
    writeSync(1, line); // no fd 3 given: the outcome goes to stdout
  }
  process.exit(outcome.ok ? 0 : 1);
}

function failure(phase, error, extra = {}) {
  const e = error instanceof Error ? error : new Error(String(error));
  return { ok: false, phase, errorType: e.name, errorMessage: e.message, code: e.code, stack: e.stack, ...extra };
}

if (!assetDir || !handlerSetting || !/^[^.]+(\/[^.]+)*\.[A-Za-z_$][\w$]*$/.test(handlerSetting)) {
  report(
    failure(
      'usage',
      new Error('usage: invoke-bundle.mjs <assetDir> <module.export> [--timeout-seconds N] [--load-only]'),
    ),
  );
}

// As Lambda's runtime: "<module>.<export>", the module file .js, .mjs or .cjs under the task root.
const dot = handlerSetting.lastIndexOf('.');
const moduleName = handlerSetting.slice(0, dot);
const exportName = handlerSetting.slice(dot + 1);
const file = ['.js', '.mjs', '.cjs'].map((ext) => resolve(assetDir, moduleName + ext)).find((f) => existsSync(f));
if (!file) report(failure('load', new Error(`no ${moduleName}.js/.mjs/.cjs in ${assetDir}`)));

const load = createRequire(join(resolve(assetDir), 'noop.js'));
let handlerModule;
const loadStart = performance.now();
try {
  handlerModule = file.endsWith('.mjs') ? await import(pathToFileURL(file).href) : load(file);
} catch (error) {
  report(failure('load', error));
}
const loadMs = performance.now() - loadStart;
const loadedModules = () => Object.keys(load.cache);

if (loadOnly) report({ ok: true, bootMs, loadMs, modules: loadedModules() });

const handler = handlerModule[exportName];
if (typeof handler !== 'function') report(failure('load', new Error(`${file} exports no function "${exportName}"`)));

const eventText = readFileSync(0, 'utf8');
const functionName = process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'bundle';
const awsRequestId = randomUUID();
const deadline = Date.now() + timeoutSeconds * 1000;
const context = {
  callbackWaitsForEmptyEventLoop: true,
  functionName,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:${process.env.AWS_REGION ?? 'us-east-1'}:123456789012:function:${functionName}`,
  memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? '128',
  awsRequestId,
  logGroupName: `/aws/lambda/${functionName}`,
  logStreamName: 'invoke-bundle',
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
};

// An error escaping the handler's promise chain fails the invocation, as in Lambda.
process.on('uncaughtException', (error) => report(failure('invoke', error, { uncaught: true })));
process.on('unhandledRejection', (error) => report(failure('invoke', error, { uncaught: true })));

const invokeStart = performance.now();
try {
  const response = await handler(JSON.parse(eventText), context);
  report({
    ok: true,
    response: response ?? null,
    bootMs,
    loadMs,
    invokeMs: performance.now() - invokeStart,
    modules: loadedModules(),
  });
} catch (error) {
  report(failure('invoke', error, { invokeMs: performance.now() - invokeStart }));
}
