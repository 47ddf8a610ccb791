/**
 * Environment variables set for a while, in this process: for a test that calls a command in
 * process and must give it what a user's shell would (a Region, credentials, an endpoint). The
 * restore puts back what was there, so that the next file in a shared worker
 * (env-unchanged.ts) runs in the environment it found.
 */
export function setEnv(vars: Record<string, string>): () => void {
  const saved = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  Object.assign(process.env, vars);
  return () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}
