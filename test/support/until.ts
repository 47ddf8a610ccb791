/** Polls `check` every `everyMs` until it holds; throws naming `what` after `timeoutMs`. */
export async function until(check: () => boolean, what: string, timeoutMs: number, everyMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
