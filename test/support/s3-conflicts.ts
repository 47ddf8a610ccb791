/**
 * S3's 409 ConditionalRequestConflict, on demand: the first conditional PutObject
 * (If-None-Match or If-Match) on each selected key is answered, in place of S3, with the
 * response S3 sends when another conditional write to that key is in flight ("If a
 * conflicting operation occurs during the upload S3 returns a 409 ConditionalRequestConflict
 * response", https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html). The answer
 * is an HTTP response, not a thrown error: the SDK's own deserializer and retry strategy meet
 * it as they would S3's. Later tries on the key go to the server.
 */
import type { S3Client } from '@aws-sdk/client-s3';

export interface InjectedConflicts {
  /** Keys whose first conditional PutObject was answered 409, in order. */
  readonly keys: string[];
}

const conflictBody = (key: string) =>
  '<?xml version="1.0" encoding="UTF-8"?>\n' +
  '<Error><Code>ConditionalRequestConflict</Code>' +
  '<Message>A conflicting conditional operation is currently in progress against this resource. ' +
  'Please try again.</Message>' +
  `<Key>${key}</Key><RequestId>INJECTED409</RequestId></Error>`;

export function injectConditionalConflicts(
  client: S3Client,
  select: (key: string) => boolean = () => true,
): InjectedConflicts {
  const keys: string[] = [];
  const answered = new Set<string>();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Key?: string; IfNoneMatch?: string; IfMatch?: string };
      const conditional = input.IfNoneMatch !== undefined || input.IfMatch !== undefined;
      const key = input.Key ?? '';
      if (context.commandName !== 'PutObjectCommand' || !conditional || answered.has(key) || !select(key))
        return next(args);
      answered.add(key);
      keys.push(key);
      const response = {
        statusCode: 409,
        reason: 'Conflict',
        headers: { 'content-type': 'application/xml', 'x-amz-request-id': 'INJECTED409' },
        body: new TextEncoder().encode(conflictBody(key)),
      };
      return { response, output: undefined as never };
    },
    // Innermost: after the signer and the deserializer, in place of the HTTP handler.
    { step: 'deserialize', priority: 'low', name: 'injectConditionalConflicts' },
  );
  return { keys };
}
