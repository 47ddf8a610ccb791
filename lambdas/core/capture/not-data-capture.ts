/**
 * A line without either of Data Capture's two top-level fields (captureData, eventMetadata)
 * is most likely another JSON Lines format given by mistake: what it looks like, by its
 * field names only (never values), so that the one-line reject detail says what the file is
 * and what was expected instead of a schema error about `captureData`.
 *
 * Data Capture's line format: https://docs.aws.amazon.com/sagemaker/latest/dg/model-monitor-data-capture-endpoint.html
 */

/** What a Data Capture line has, said in every detail. */
const EXPECTED = 'expected SageMaker Data Capture lines (captureData.endpointInput and eventMetadata)';

/** Formats recognised by their fields, the most specific first. */
const LOOKS_LIKE: [test: (has: (k: string) => boolean) => boolean, what: string][] = [
  [(has) => has('endpointInput') || has('endpointOutput'), 'a captureData object without the line around it'],
  [
    (has) => has('metadata') && has('metrics'),
    'an AIPerf profile export (profile_export.jsonl records), the results of a run, not its input',
  ],
  [(has) => has('custom_id') && has('body'), 'an OpenAI Batch input file'],
  [(has) => has('messages'), 'OpenAI chat requests'],
  [(has) => has('prompt'), 'completion requests'],
  [(has) => has('timestamp') && (has('input_length') || has('hash_ids')), 'a Mooncake trace (AIPerf mooncake_trace)'],
  [(has) => has('text') || has('texts'), 'an AIPerf single-turn dataset'],
  [(has) => has('instances') || has('inputs'), 'SageMaker request bodies without their Data Capture envelope'],
];

/** Field names safe to print (a hostile file's keys are its text). */
const PRINTABLE_KEY = /^[A-Za-z0-9_.-]{1,40}$/;

/** The reject detail of an object with neither Data Capture field; null when it has one (the schema explains that one). */
export function notDataCaptureDetail(value: object): string | null {
  if ('captureData' in value || 'eventMetadata' in value) return null;
  const keys = Object.keys(value);
  const has = (k: string) => Object.prototype.hasOwnProperty.call(value, k);
  const match = LOOKS_LIKE.find(([test]) => test(has));
  const shown = keys.filter((k) => PRINTABLE_KEY.test(k)).slice(0, 5);
  const fields =
    keys.length === 0 ? 'no fields' : `fields ${shown.join(', ')}${keys.length > shown.length ? ', ...' : ''}`;
  return `not SageMaker Data Capture: looks like ${match ? match[1] : 'some other JSON Lines format'} (${fields}); ${EXPECTED}`;
}
