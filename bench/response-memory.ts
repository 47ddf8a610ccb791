/**
 * Peak memory of the CLI against large responses: 40 requests (all in one captured second, so
 * all in flight together) answered with 50 MB bodies, error (500 / a 502 page) and success
 * (a 200 JSON answer), to an HTTP target and to a SageMaker target. The target is the fault
 * server (test/support/fault-server.ts) in its own process; the CLI is another process whose
 * peak RSS (getrusage) is written at exit by test/support/max-rss.mjs.
 *
 *   node --import tsx bench/response-memory.ts [--repo <checkout>] [--count 40]
 *
 * `--repo` runs the CLI of another checkout (e.g. an earlier commit in a worktree, with
 * node_modules linked) against the same server and captures: before / after.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { faultCaptureLine, FAULT_BODY_BYTES } from '../test/support/fault-server';
import { REPO_ROOT, startUrlProcess } from '../test/support/processes';
import { flag } from './args';
import { cliOf } from './cli-path';

const at = process.argv.indexOf('--repo');
const repo = at === -1 ? REPO_ROOT : resolve(process.argv[at + 1] as string);
const cliScript = await cliOf(repo);
const count = flag('--count', 40);
const dir = mkdtempSync(join(tmpdir(), 'cr-bench-resp-'));
const server = await startUrlProcess([join(REPO_ROOT, 'test/support/fault-server.ts')], [], 'fault server');

interface Case {
  name: string;
  fault: string;
  target: string[];
  env?: NodeJS.ProcessEnv;
}
const sagemaker = {
  AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: server.url,
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'AKIDBENCH',
  AWS_SECRET_ACCESS_KEY: 'bench',
  AWS_PROFILE: '',
  AWS_SESSION_TOKEN: '',
};
const cases: Case[] = [
  { name: 'HTTP, 500 + 50 MB body', fault: 'error-50mb', target: ['--url', server.url] },
  { name: 'HTTP, 200 + 50 MB answer', fault: 'ok-50mb', target: ['--url', server.url] },
  {
    name: 'SageMaker, 502 + 50 MB body',
    fault: 'error-50mb',
    target: ['--target', 'S=sagemaker:bench'],
    env: sagemaker,
  },
  {
    name: 'SageMaker, 200 + 50 MB answer',
    fault: 'ok-50mb',
    target: ['--target', 'S=sagemaker:bench'],
    env: sagemaker,
  },
];

console.log(`CLI of ${repo}; ${count} responses of ${FAULT_BODY_BYTES / 2 ** 20} MB per case, all in flight together`);
console.log('| case | exit | wall s | peak RSS MB | records ok / error |');
console.log('| --- | ---: | ---: | ---: | --- |');
try {
  for (const [i, c] of cases.entries()) {
    const folder = join(dir, `cap-${i}`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(
      join(folder, 'c.jsonl'),
      Array.from({ length: count }, (_, k) => faultCaptureLine(k, c.fault)).join('\n') + '\n',
    );
    const rssFile = join(dir, `rss-${i}`);
    const started = performance.now();
    const child = spawn(
      process.execPath,
      [
        '--import',
        join(REPO_ROOT, 'test/support/max-rss.mjs'),
        cliScript,
        'replay',
        folder,
        ...c.target,
        '--out',
        join(dir, 'out'),
        '--run-id',
        `case-${i}`,
        '--no-progress',
        '--timeout',
        '300000',
        '--lead',
        '200',
      ],
      {
        cwd: repo,
        env: { ...process.env, ...c.env, CAPTURE_REPLAY_TEST_MAXRSS_FILE: rssFile },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const [code] = (await once(child, 'exit')) as [number | null];
    const wall = (performance.now() - started) / 1000;
    const peak = Number(readFileSync(rssFile, 'utf8')) / 2 ** 20;
    let outcome = '';
    try {
      const targetDir = join(dir, 'out', `case-${i}`, c.target[0] === '--url' ? 'target' : 'S');
      const records = readFileSync(join(targetDir, 'profile_export.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { error: { code: number | null; type: string } | null });
      const errors = new Map<string, number>();
      for (const r of records)
        if (r.error)
          errors.set(`${r.error.type} ${r.error.code}`, (errors.get(`${r.error.type} ${r.error.code}`) ?? 0) + 1);
      outcome = `${records.filter((r) => !r.error).length} / ${[...errors].map(([k, n]) => `${n} ${k}`).join(', ') || '0'}`;
    } catch (error) {
      outcome = `no records (${String(error).slice(0, 60)}; ${stderr.trim().split('\n').pop()?.slice(0, 80)})`;
    }
    console.log(`| ${c.name} | ${code} | ${wall.toFixed(1)} | ${peak.toFixed(0)} | ${outcome} |`);
  }
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
