/**
 * Every relative link in README.md and docs/*.md points at a file that exists and, with a
 * `#fragment`, at a heading of that file (anchors as GitHub makes them); and the README links
 * every page of docs/.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const DOCS = join(ROOT, 'docs');

/** The markdown files whose links are checked. */
function markdownFiles(): string[] {
  const docs = existsSync(DOCS)
    ? readdirSync(DOCS)
        .filter((f) => f.endsWith('.md'))
        .map((f) => join(DOCS, f))
    : [];
  return [join(ROOT, 'README.md'), ...docs.sort()];
}

/** The text without fenced code blocks and inline code spans (links there are examples, not links). */
function proseOf(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/(`+)[\s\S]*?\1/g, '');
}

/** Heading text as GitHub renders it, then its anchor (github-slugger's rule). */
function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every heading's anchor in a markdown file; a repeated heading gets -1, -2, ... as on GitHub. */
function anchorsOf(markdown: string): Set<string> {
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const match of withoutFences.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const slug = githubSlug(match[1] as string);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The problems of one file's relative links: `file: [text](target): why`. */
function brokenLinks(file: string, markdown: string, read: (path: string) => string | null): string[] {
  const problems: string[] = [];
  for (const match of proseOf(markdown).matchAll(/\[([^\]]*)\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)) {
    const target = match[2] as string;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...
    const [pathPart = '', fragment] = target.split('#', 2);
    const path = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
    const where = `${relative(ROOT, file)}: [${match[1]}](${target})`;
    const text = read(path);
    if (text === null) {
      problems.push(`${where}: ${relative(ROOT, path)} does not exist`);
      continue;
    }
    if (fragment === undefined) continue;
    if (!path.endsWith('.md')) problems.push(`${where}: an anchor into a file that is not markdown`);
    else if (!anchorsOf(text).has(decodeURIComponent(fragment)))
      problems.push(`${where}: no heading with anchor #${fragment} in ${relative(ROOT, path)}`);
  }
  return problems;
}

/** A file's text; '' for a folder (links to folders are fine); null when nothing is there. */
function readIfExists(path: string): string | null {
  if (!existsSync(path)) return null;
  return statSync(path).isDirectory() ? '' : readFileSync(path, 'utf8');
}

describe('links in README.md and docs/', () => {
  it('point at files and headings that exist', () => {
    const problems = markdownFiles().flatMap((file) => brokenLinks(file, readFileSync(file, 'utf8'), readIfExists));
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('leave the README short enough to read in five minutes (at most 250 lines)', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length - 1;
    expect(lines, 'README.md is the five-minute entry: move detail into a docs/ page').toBeLessThanOrEqual(250);
  });

  it('include a link from the README to every page of docs/', () => {
    const readme = proseOf(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    const unlinked = markdownFiles()
      .slice(1)
      .map((file) => relative(ROOT, file))
      .filter((page) => !readme.includes(`](${page})`));
    expect(unlinked, `docs pages the README does not link: ${unlinked.join(', ')}`).toEqual([]);
  });
});

describe('the link checker', () => {
  const file = join(ROOT, 'docs', 'page.md');
  const files: Record<string, string> = {
    [join(ROOT, 'docs', 'page.md')]: '# Page\n\n## Same\n\n## Same\n',
    [join(ROOT, 'docs', 'other.md')]:
      '# Other\n\n### `--wait coarse` against `--wait precise`, idle\n\n## A/B: is B better?\n',
  };
  const read = (path: string) => files[path] ?? null;

  it('makes anchors as GitHub does', () => {
    expect(githubSlug('`--wait coarse` against `--wait precise`, idle')).toBe(
      '--wait-coarse-against---wait-precise-idle',
    );
    expect(githubSlug("What a finished request's deadline still holds")).toBe(
      'what-a-finished-requests-deadline-still-holds',
    );
    expect(githubSlug('Plan function: a one-hour window at 50 requests/s (bench:window)')).toBe(
      'plan-function-a-one-hour-window-at-50-requestss-benchwindow',
    );
    expect(githubSlug('A/B: is B better or worse than A, on the same requests?')).toBe(
      'ab-is-b-better-or-worse-than-a-on-the-same-requests',
    );
    expect([...anchorsOf('## Same\n## Same\n## Same\n')]).toEqual(['same', 'same-1', 'same-2']);
  });

  it('accepts links that resolve, and ignores external links and code', () => {
    const page =
      '[a](other.md) [b](other.md#ab-is-b-better) [c](#same-1) [d](https://example.com/x.md) ' +
      '`[e](missing.md)`\n```\n[f](missing.md)\n```\n';
    expect(brokenLinks(file, page, read)).toEqual([]);
  });

  it('reports a missing file and a missing anchor, naming each', () => {
    const page = '[gone](gone.md) [bad](other.md#no-such-heading) [self](#nothing)';
    expect(brokenLinks(file, page, read)).toEqual([
      'docs/page.md: [gone](gone.md): docs/gone.md does not exist',
      'docs/page.md: [bad](other.md#no-such-heading): no heading with anchor #no-such-heading in docs/other.md',
      'docs/page.md: [self](#nothing): no heading with anchor #nothing in docs/page.md',
    ]);
  });
});
