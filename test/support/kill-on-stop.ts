/**
 * Process groups a test started in sessions of their own (moto_server, cdk synth) are not in
 * the test run's process group: a stop signal to the run (Ctrl-C, or npm test passing one on)
 * does not reach them, and neither does the end of the worker that started them. Each is
 * killed when this process exits or is stopped by a signal; the signal then ends the process
 * as it would have.
 */
const groups = new Set<number>();
const STOPS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function killAll(): void {
  for (const pid of groups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  groups.clear();
}

let installed = false;
function install(): void {
  if (installed) return;
  installed = true;
  process.once('exit', killAll);
  for (const signal of STOPS) {
    process.once(signal, () => {
      killAll();
      // The listener is gone: the signal does what it would have done without it.
      process.kill(process.pid, signal);
    });
  }
}

/** Kills the process group led by `pid` if this process ends first; the returned function forgets it. */
export function killGroupOnStop(pid: number | undefined): () => void {
  if (pid === undefined) return () => {};
  install();
  groups.add(pid);
  return () => groups.delete(pid);
}
