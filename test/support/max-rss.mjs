// Loaded with `node --import` into a process under test: at exit, writes the process's peak
// resident set size in bytes (getrusage's ru_maxrss) to $CAPTURE_REPLAY_TEST_MAXRSS_FILE.
import { writeFileSync } from 'node:fs';

const file = process.env.CAPTURE_REPLAY_TEST_MAXRSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS * 1024)));
