/**
 * Credentials never reach an output file: a URL's userinfo (`https://user:secret@host`) and
 * the values of query parameters that carry secrets (`?api_key=...`, `X-Amz-Signature=...`)
 * are removed from any text we write (error messages, configuration echoes).
 */

const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]*@/gi;
const SECRET_PARAM = /([?&;](?:api[_-]?key|key|access[_-]?token|token|secret|client[_-]?secret|password|passwd|pwd|auth|authorization|sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token)=)[^&#\s"'<>]+/gi;

/** `text` with every URL's userinfo removed and secret query values replaced by `***`. */
export function stripUrlCredentials(text: string): string {
  if (!text.includes('://') && !text.includes('=')) return text;
  return text.replace(USERINFO, '$1').replace(SECRET_PARAM, '$1***');
}
