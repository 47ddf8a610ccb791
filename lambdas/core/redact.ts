/**
 * Credentials never reach an output file: a URL's userinfo (`https://user:secret@host`) and
 * the values of query parameters that carry secrets (`?api_key=...`, `X-Amz-Signature=...`)
 * are removed from any text we write (error messages, configuration echoes, the exports' URLs).
 *
 * A parameter carries a secret when its name says so (isSecretParamName): it ends with token,
 * key, sig, signature, auth, authorization, pwd or credential(s), holds secret or passw, or is
 * one of AWS's presigning parameters (X-Amz-*). A harmless parameter caught by the rule
 * (`?sort_key=`) loses its value in what we write, never in what is sent.
 */

const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]*@/gi;
/**
 * `?name=value`, `&name=value`, `;name=value` or `#name=value` (a fragment's OAuth token); the value ends at a
 * bracket (a URL in parentheses).
 */
const QUERY_PARAM = /([?&;#])([^=&#\s"'<>?;]+)=([^&#\s"'<>()]+)/g;
const SECRET_WORD = /secret|passw/;
const SECRET_END = /(?:token|key|sig|signature|auth|authorization|pwd|credentials?)$/;

function decoded(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}

/** Whether a query parameter of this name carries a credential (see above); the name as written, encoded or not. */
export function isSecretParamName(raw: string): boolean {
  const name = decoded(raw).trim().toLowerCase();
  return name.startsWith('x-amz-') || SECRET_WORD.test(name) || SECRET_END.test(name);
}

/** The names of `url`'s query parameters that carry a credential, each once, as written. */
export function secretQueryParams(url: URL): string[] {
  return [...new Set([...url.searchParams.keys()].filter(isSecretParamName))];
}

/** `text` with every URL's userinfo removed and secret query values replaced by `***`. */
export function stripUrlCredentials(text: string): string {
  if (!text.includes('://') && !text.includes('=')) return text;
  return text
    .replace(USERINFO, '$1')
    .replace(QUERY_PARAM, (whole, lead: string, name: string) =>
      isSecretParamName(name) ? `${lead}${name}=***` : whole,
    );
}

/**
 * A URL as it may be written down: without userinfo or fragment, its secret query values
 * `***` (`https://user:pw@host:8443/v1?token=abc` -> `https://host:8443/v1?token=***`); a bare
 * origin without the `/` URL adds (as AIPerf writes its URLs). Null when it is not a URL.
 */
export function redactedUrl(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  url.username = '';
  url.password = '';
  url.hash = '';
  const text = stripUrlCredentials(url.toString());
  return url.pathname === '/' && url.search === '' ? text.slice(0, -1) : text;
}
