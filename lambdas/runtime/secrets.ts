/**
 * The bearer key from a Secrets Manager secret. The console's default secret is JSON
 * (`{"api_key": "..."}`): sending that whole text as `Bearer {...}` would fail every request
 * with 401, so a JSON secret is read by the field the configuration names, and a JSON secret
 * without a named field is an error, not a guess.
 */
export function bearerKeyFromSecret(secretString: string | undefined, secretId: string, field: string | undefined): string {
  if (secretString === undefined || secretString === '') throw new Error(`secret ${secretId} has no SecretString (binary secrets are not supported)`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(secretString);
  } catch {
    parsed = undefined;
  }
  const isObject = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
  if (field === undefined) {
    if (isObject) throw new Error(`secret ${secretId} holds JSON: set apiKeySecretField to the field that holds the key (fields: ${Object.keys(parsed as object).slice(0, 10).join(', ')})`);
    return secretString.trim();
  }
  if (!isObject) throw new Error(`secret ${secretId} is not a JSON object, but apiKeySecretField "${field}" was configured`);
  const value = (parsed as Record<string, unknown>)[field];
  if (typeof value !== 'string' || value.trim() === '') throw new Error(`secret ${secretId} has no non-empty string field "${field}"`);
  return value.trim();
}
