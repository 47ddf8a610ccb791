/**
 * Environment variables set (or unset: undefined) for a while, in this process: for a test that calls a command in
 * process and must give it what a user's shell would (a Region, credentials, an endpoint). The
 * restore puts back what was there, so that the next file in a shared worker
 * (env-unchanged.ts) runs in the environment it found.
 */
export function setEnv(vars: Record<string, string | undefined>): () => void {
  const saved = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  assign(vars);
  return () => assign(saved);
}

/** Sets each variable; an undefined one is unset. */
function assign(vars: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(vars)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
}
