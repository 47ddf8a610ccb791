/**
 * What a target may be called, wherever one is named: the deployment config (runtime/config.ts,
 * checked again by the functions), `replay --target NAME=URL` and `link --target`. A name is a
 * folder of the results (`runs/<run-id>/<target>/`, locally and in S3) and a key of the
 * comparison, so it is a plain path segment: letters, digits, `.`, `_` and `-`, starting with
 * a letter or digit (never `.`, `..` nor something read as a flag), at most 63 characters.
 *
 * The run's own files sit beside the target folders (`report.html`, `comparison.json`,
 * `ingest_report.json`, ...): a target named like one would take its place, and the run
 * would fail writing its results after sending the whole schedule. So a name never ends in
 * the extension of a results file (`.html`, `.json`, `.jsonl`, `.csv`, in any case, since
 * macOS and Windows folders ignore case).
 */
export const TARGET_NAME_PATTERN = /^(?!.*\.(?:html|jsonl?|csv)$)[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/i;

/** A path segment of the results, the extension rule aside. */
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const RESULT_FILE_EXTENSION = /\.(?:html|jsonl?|csv)$/i;

export function isTargetName(name: string): boolean {
  return TARGET_NAME_PATTERN.test(name);
}

/** Why `name` is not a target name, in a few words, or null when it is one. */
export function targetNameProblem(name: string): string | null {
  if (isTargetName(name)) return null;
  if (name === '') return 'is missing';
  const extension = RESULT_FILE_EXTENSION.exec(name);
  if (extension && SEGMENT.test(name))
    return `ends in ${extension[0]}, like the run folder's own files (report.html, comparison.json...) beside the target folders`;
  return "must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit";
}
