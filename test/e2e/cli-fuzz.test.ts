/**
 * The CLI under abuse (issue 10): seeded capture folders mixing everything a hostile tester
 * threw at it, replayed by the real CLI (its own process) against the bundled mock server.
 * Whatever the input, the run ends with an exit status that says what happened, no stack
 * trace, every line of every file counted under `accepted`, `blank` or exactly one reason in
 * ingest_report.json (checked against what the generator wrote, file by file), every file
 * that could not be read listed as skipped with its reason, and balanced manifests.
 *
 * The cases in each folder: the describe below.
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../lambdas/core/random';
import { cliScript, REPO_ROOT, runCli, startMockProcess, type CliResult, type MockProcess } from '../support/processes';

const LINE_CAP = 64 * 1024;
const NOBODY = 65534;

interface ExpectedFile {
  linesRead: number;
  blankLines: number;
  accepted: number;
  rejectedByReason: Record<string, number>;
}

interface Folder {
  root: string;
  files: Map<string, ExpectedFile>;
  /** Skipped path -> pattern its reason must match. */
  skipped: Map<string, RegExp>;
  /** Paths to chmod 000 once the folder is written (and back before it is removed). */
  locked: string[];
}

/** Whether the CLI can run as `nobody` (root test process): it must read the CLI and the repository. */
function canRunAsNobody(): boolean {
  const readable = [cliScript(), join(REPO_ROOT, 'package.json')];
  const probe = spawnSync(
    process.execPath,
    ['-e', `for (const f of ${JSON.stringify(readable)}) require('fs').accessSync(f, require('fs').constants.R_OK)`],
    { uid: NOBODY, gid: NOBODY },
  );
  return probe.status === 0;
}

const isRoot = process.getuid?.() === 0;
const asNobody = isRoot && canRunAsNobody();
/** EACCES cases: chmod denies a normal user, and root's CLI runs as nobody when it can. */
const withEacces = !isRoot || asNobody;
if (!withEacces)
  process.stdout.write(
    'cli-fuzz.test.ts: running as root and the CLI cannot run as nobody (repository not readable by it): the ' +
      'EACCES sub-cases are left out\n',
  );

/** runCli, as `nobody` when the test runs as root. */
function replay(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return runCli(args, { env, ...(asNobody ? { uid: NOBODY, gid: NOBODY } : {}) });
}

/** A capture line; `data` is the request body text (JSON encoding) unless `base64`. */
function line(
  eventId: string,
  inferenceTime: string,
  data: string,
  extra: { base64?: boolean; contentType?: string } = {},
): string {
  return JSON.stringify({
    captureData: {
      endpointInput: {
        observedContentType: extra.contentType ?? 'application/json',
        mode: 'INPUT',
        data: extra.base64 ? Buffer.from(data).toString('base64') : data,
        encoding: extra.base64 ? 'BASE64' : 'JSON',
      },
      endpointOutput: {
        observedContentType: 'application/json',
        mode: 'OUTPUT',
        data: '{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}',
        encoding: 'JSON',
      },
    },
    eventMetadata: { eventId, inferenceTime },
    eventVersion: '0',
  });
}

/** Writes `size` bytes of one over-limit line as a stream (never one string), `newline` after it or not. */
async function writeHugeLine(out: ReturnType<typeof createWriteStream>, size: number, newline: boolean): Promise<void> {
  const head = '{"captureData":{"endpointInput":{"observedContentType":"application/json","encoding":"JSON","data":"';
  const piece = Buffer.alloc(64 * 1024, 0x61);
  let left = size - head.length - 2;
  if (!out.write(head)) await once(out, 'drain');
  while (left > 0) {
    const n = Math.min(left, piece.length);
    if (!out.write(piece.subarray(0, n))) await once(out, 'drain');
    left -= n;
  }
  if (!out.write('"}' + (newline ? '\n' : ''))) await once(out, 'drain');
}

/** One seeded folder and, per file, what its report must say. */
async function generateFolder(base: string, seed: number, replayable: boolean): Promise<Folder> {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const root = join(base, `seed-${seed}`);
  const hour = join(root, 'ep/AllTraffic/2026/04/29/00');
  mkdirSync(hour, { recursive: true });
  const folder: Folder = { root, files: new Map(), skipped: new Map(), locked: [] };
  let ids = 0;
  const nextId = () => `ev-${seed}-${++ids}`;
  const time = () =>
    `2026-04-29T00:00:0${int(0, 4)}${pick(['Z', 'Z', '.000Z', `.${String(int(0, 999)).padStart(3, '0')}Z`])}`;
  const chat = (id: string) =>
    JSON.stringify({
      model: 'm1',
      messages: [{ role: 'user', content: `hello ${id} ${'word '.repeat(int(0, 30))}` }],
      max_tokens: int(4, 16),
    });

  // Each generated line: its text and what it must be counted as.
  type Line = { text: string; as: 'accepted' | 'blank' | string };
  const good = (): Line => {
    const id = nextId();
    return { text: line(id, time(), chat(id), { base64: random() < 0.3 }), as: 'accepted' };
  };
  const bad = (): Line => {
    const id = nextId();
    const kind = int(0, 9);
    const depth = int(4000, 15000);
    switch (kind) {
      case 0:
        return { text: 'not json at all', as: 'invalid_json' };
      case 1:
        return { text: `[${int(0, 9)}]`, as: 'not_an_object' };
      case 2:
        return { text: JSON.stringify({ captureData: {}, eventMetadata: { eventId: id } }), as: 'missing_field' };
      case 3:
        return {
          text: line(id, pick(['yesterday', '2026-02-30T00:00:00Z', '2026-04-29 00:00:00Z']), chat(id)),
          as: 'bad_inference_time',
        };
      case 4:
        return {
          text: line(
            id,
            pick([
              '9999-12-31T23:59:59Z',
              `00${int(0, 9)}${int(0, 9)}-06-01T00:00:00Z`,
              '1999-01-01T00:00:00Z',
              '2017-11-28T23:59:59Z',
            ]),
            chat(id),
          ),
          as: 'implausible_time',
        };
      case 5:
        return {
          text: line(id, time(), chat(id)).replace('"encoding":"JSON"', '"encoding":"BASE64"'),
          as: 'bad_base64',
        };
      case 6:
        return { text: line(id, time(), '{"messages":[{"role":'), as: 'bad_inner_json' };
      case 7:
        return {
          text: line(id, time(), '{"messages":'.concat('['.repeat(depth), ']'.repeat(depth), '}')).replace(
            '"encoding":"JSON"',
            '"encoding":"UTF-7"',
          ),
          as: 'bad_encoding',
        };
      case 8:
        // A deep chat body: accepted and rewritten by --streaming and --model (V8's stringify
        // overflows past ~4,500 levels); in a folder with nothing replayable, one bracket short.
        return {
          text: line(
            id,
            time(),
            `{"messages":[{"role":"user","content":"deep ` +
              `${id}"}],"deep":${'['.repeat(depth)}${']'.repeat(replayable ? depth : depth - 1)}}`,
          ),
          as: replayable ? 'accepted' : 'bad_inner_json',
        };
      default:
        return { text: '   \t', as: 'blank' };
    }
  };

  const writeLines = async (
    name: string,
    lines: Line[],
    options: { bom?: boolean; crlf?: boolean; hugeAt?: number; hugeLast?: boolean; truncatedLast?: boolean } = {},
  ) => {
    const path = join(hour, name);
    const out = createWriteStream(path);
    const eol = options.crlf ? '\r\n' : '\n';
    const expected: ExpectedFile = { linesRead: 0, blankLines: 0, accepted: 0, rejectedByReason: {} };
    const count = (as: string) => {
      expected.linesRead++;
      if (as === 'accepted') expected.accepted++;
      else if (as === 'blank') expected.blankLines++;
      else expected.rejectedByReason[as] = (expected.rejectedByReason[as] ?? 0) + 1;
    };
    if (options.bom) out.write('\uFEFF');
    for (const [i, l] of lines.entries()) {
      if (options.hugeAt === i) {
        await writeHugeLine(out, int(LINE_CAP + 6000, 3 * 1024 * 1024), true);
        count('line_too_long');
      }
      if (!out.write(l.text + eol)) await once(out, 'drain');
      count(l.as);
    }
    if (options.hugeLast) {
      await writeHugeLine(out, int(LINE_CAP + 6000, 1024 * 1024), false);
      count('line_too_long');
    } else if (options.truncatedLast) {
      out.write(line(nextId(), time(), chat('cut')).slice(0, int(10, 80)));
      count('truncated_line');
    }
    out.end();
    await once(out, 'finish');
    folder.files.set(path, expected);
  };

  const mixed = (n: number): Line[] => {
    const lines: Line[] = [];
    for (let i = 0; i < n; i++) lines.push(replayable && random() < 0.5 ? good() : bad());
    // A duplicate: an accepted line again, same eventId and body.
    const original = lines.find((l) => l.as === 'accepted');
    if (original) lines.push({ text: original.text, as: 'duplicate' });
    // A byte-order mark at a line's start (files joined with their marks): read as the line.
    if (replayable) lines.splice(int(0, lines.length), 0, { ...good(), text: '\uFEFF' + good().text });
    return lines;
  };

  await writeLines('01-bom-crlf.jsonl', mixed(int(8, 20)), { bom: true, crlf: true, truncatedLast: true });
  await writeLines('02-huge.jsonl', mixed(int(5, 12)), { hugeAt: int(0, 4), hugeLast: random() < 0.5 });
  await writeLines('03-plain.jsonl', mixed(int(5, 15)), { crlf: random() < 0.5 });
  writeFileSync(join(hour, '04-empty.jsonl'), '');
  folder.files.set(join(hour, '04-empty.jsonl'), { linesRead: 0, blankLines: 0, accepted: 0, rejectedByReason: {} });
  writeFileSync(join(hour, '05-bom-only.jsonl'), '\uFEFF');
  folder.files.set(join(hour, '05-bom-only.jsonl'), { linesRead: 1, blankLines: 1, accepted: 0, rejectedByReason: {} });
  writeFileSync(join(hour, '06-gzip.jsonl'), gzipSync(line(nextId(), time(), chat('gz')) + '\n'));
  folder.skipped.set(join(hour, '06-gzip.jsonl'), /^gzip-compressed \(starts with bytes 1f 8b\)/);
  writeFileSync(join(hour, '07-notes.txt'), 'not a capture');
  folder.skipped.set(join(hour, '07-notes.txt'), /^not a \.jsonl file$/);
  symlinkSync(join(hour, 'nowhere.jsonl'), join(hour, '08-dangling.jsonl'));
  folder.skipped.set(join(hour, '08-dangling.jsonl'), /^a symbolic link \(not followed\)$/);
  if (spawnSync('mkfifo', [join(hour, '09-fifo.jsonl')]).status === 0)
    folder.skipped.set(join(hour, '09-fifo.jsonl'), /^not a regular file$/);
  if (withEacces) {
    writeFileSync(join(hour, '10-locked.jsonl'), line(nextId(), time(), chat('locked')) + '\n');
    folder.locked.push(join(hour, '10-locked.jsonl'));
    folder.skipped.set(join(hour, '10-locked.jsonl'), /^not read: EACCES/);
    mkdirSync(join(root, 'ep/AllTraffic/2026/04/29/01'));
    writeFileSync(
      join(root, 'ep/AllTraffic/2026/04/29/01/inside.jsonl'),
      line(nextId(), time(), chat('inside')) + '\n',
    );
    folder.locked.push(join(root, 'ep/AllTraffic/2026/04/29/01'));
    folder.skipped.set(join(root, 'ep/AllTraffic/2026/04/29/01'), /^folder not read: EACCES/);
  }
  // Readable by the unprivileged CLI, then the locked entries locked.
  spawnSync('chmod', ['-R', 'a+rX', root]);
  for (const path of folder.locked) chmodSync(path, 0o000);
  return folder;
}

interface IngestReport {
  files: (ExpectedFile & { file: string; rejected: number })[];
  skippedFiles: { file: string; reason: string }[];
  totals: {
    files: number;
    linesRead: number;
    blankLines: number;
    accepted: number;
    rejected: number;
    rejectedByReason: Record<string, number>;
  };
  timing?: { wholeSecondRecords: number; exactTimeRecords: number; spreadRecords: number; maxSpreadMs: number };
}

function expectAccounted(report: IngestReport, folder: Folder): void {
  // Per file, exactly what was written.
  expect(new Set(report.files.map((f) => f.file))).toEqual(new Set(folder.files.keys()));
  for (const f of report.files) {
    const want = folder.files.get(f.file) as ExpectedFile;
    expect({
      file: f.file,
      linesRead: f.linesRead,
      blankLines: f.blankLines,
      accepted: f.accepted,
      rejectedByReason: f.rejectedByReason,
    }).toEqual({ file: f.file, ...want });
    expect(f.linesRead).toBe(f.blankLines + f.accepted + f.rejected);
  }
  // Every other entry skipped, each with its reason.
  expect(report.skippedFiles.map((s) => s.file).sort()).toEqual([...folder.skipped.keys()].sort());
  for (const s of report.skippedFiles) expect(s.reason, s.file).toMatch(folder.skipped.get(s.file) as RegExp);
  expect(report.totals.linesRead).toBe(report.totals.blankLines + report.totals.accepted + report.totals.rejected);
}

function expectNoCrash(run: CliResult): void {
  expect(run.stderr).not.toMatch(/^\s+at .+\d+:\d+\)?$/m);
  expect(run.stderr).not.toMatch(
    /RangeError|TypeError|TimeoutOverflowWarning|Maximum call stack|Cannot create a string/,
  );
}

/**
 * Cases per folder: bodies nested 4,000-15,000 deep (rewritten by --streaming/--model), a
 * line over the line cap (lowered to 64 KiB through CAPTURE_REPLAY_MAX_LINE_BYTES, the
 * documented setting, so the over-limit lines are 70 KB-3 MB, written as a stream), a
 * UTF-8 BOM at a file's start and at a line's start, CRLF files, an empty file, a BOM-only
 * file, a gzip file named .jsonl, implausible dates (0000-0099, 1999, 9999), an unreadable
 * file and folder (chmod 000; as root, where chmod does not deny, the CLI runs as the
 * unprivileged user `nobody`), a FIFO and a dangling symlink named .jsonl, and invalid lines
 * of every kind, a truncated last line included.
 */
describe('capture-replay replay on hostile capture folders (seeded)', () => {
  const work = mkdtempSync(join(tmpdir(), 'capture-replay-fuzz-'));
  const folders = new Map<string, Folder>();
  let server: MockProcess;
  const env = { CAPTURE_REPLAY_MAX_LINE_BYTES: String(LINE_CAP) };

  beforeAll(async () => {
    chmodSync(work, 0o777);
    mkdirSync(join(work, 'out'), { mode: 0o777 });
    chmodSync(join(work, 'out'), 0o777);
    for (const seed of [101, 202, 303]) folders.set(`replayable-${seed}`, await generateFolder(work, seed, true));
    folders.set('nothing-replayable', await generateFolder(work, 404, false));
    server = await startMockProcess(['--ttft-ms', '2', '--itl-ms', '1', '--output-tokens', '3']);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    for (const folder of folders.values()) for (const path of folder.locked) chmodSync(path, 0o755);
    rmSync(work, { recursive: true, force: true });
  });

  for (const seed of [101, 202, 303]) {
    it(`seed ${seed}: exits 0, every line accounted for, every manifest balanced`, async () => {
      const folder = folders.get(`replayable-${seed}`) as Folder;
      const runId = `fuzz-${seed}`;
      const run = await replay(
        [
          'replay',
          folder.root,
          '--url',
          server.url,
          '--out',
          join(work, 'out'),
          '--run-id',
          runId,
          '--streaming',
          '--model',
          'fuzz-model',
          '--time-scale',
          '4',
          '--no-progress',
          '--rehearsal',
          '0',
        ],
        env,
      );
      expectNoCrash(run);
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(readFileSync(join(work, 'out', runId, 'ingest_report.json'), 'utf8')) as IngestReport;
      expectAccounted(report, folder);
      const accepted = [...folder.files.values()].reduce((n, f) => n + f.accepted, 0);
      expect(report.totals.accepted).toBe(accepted);
      expect(report.timing).toMatchObject({
        wholeSecondRecords: expect.any(Number),
        spreadRecords: expect.any(Number),
      });
      expect(report.timing!.wholeSecondRecords + report.timing!.exactTimeRecords).toBe(accepted);
      const manifest = JSON.parse(readFileSync(join(work, 'out', runId, 'target', 'run_manifest.json'), 'utf8')) as {
        scheduled: number;
        succeeded: number;
        failed: number;
        dropped: number;
        balanced: boolean;
      };
      expect(manifest).toMatchObject({
        scheduled: accepted,
        succeeded: accepted,
        failed: 0,
        dropped: 0,
        balanced: true,
      });
    }, 60_000);
  }

  it('a folder with nothing replayable: exits 1 naming the ingest report, which is written and exact', async () => {
    const folder = folders.get('nothing-replayable') as Folder;
    const run = await replay(
      [
        'replay',
        folder.root,
        '--url',
        server.url,
        '--out',
        join(work, 'out'),
        '--run-id',
        'fuzz-none',
        '--streaming',
        '--no-progress',
        '--rehearsal',
        '0',
      ],
      env,
    );
    expectNoCrash(run);
    expect(run.code).toBe(1);
    const reportPath = join(work, 'out', 'fuzz-none', 'ingest_report.json');
    expect(run.stderr).toContain(`no replayable capture records (see ${reportPath} for the reasons)`);
    const report = JSON.parse(readFileSync(reportPath, 'utf8')) as IngestReport;
    expectAccounted(report, folder);
    expect(report.totals.accepted).toBe(0);
  }, 60_000);

  it('a folder of files that cannot be read (gzip, empty, unreadable): exits 1, the report lists each with its reason', async () => {
    const root = join(work, 'unreadable');
    mkdirSync(root);
    writeFileSync(join(root, 'a.jsonl'), gzipSync('{}\n'));
    writeFileSync(join(root, 'b.jsonl.gz'), gzipSync('{}\n'));
    spawnSync('chmod', ['-R', 'a+rX', root]);
    const run = await replay(
      [
        'replay',
        root,
        '--url',
        server.url,
        '--out',
        join(work, 'out'),
        '--run-id',
        'fuzz-unreadable',
        '--no-progress',
        '--rehearsal',
        '0',
      ],
      env,
    );
    expectNoCrash(run);
    expect(run.code).toBe(1);
    const reportPath = join(work, 'out', 'fuzz-unreadable', 'ingest_report.json');
    expect(run.stderr).toContain(`no .jsonl capture files under ${root} could be read (2 skipped, see ${reportPath})`);
    const report = JSON.parse(readFileSync(reportPath, 'utf8')) as IngestReport;
    expect(report.skippedFiles.map((s) => [s.file.slice(root.length + 1), s.reason.split(' (')[0]])).toEqual([
      ['b.jsonl.gz', 'not a .jsonl file'],
      ['a.jsonl', 'gzip-compressed'],
    ]);
  }, 60_000);
});
