// V8's trace of every garbage collection, one line of name=value pairs each (pause, the phases,
// bytes promoted and survived), on stdout: preloaded into each fire invocation with
// `npm run bench:fire-lateness -- --node-options "--import $PWD/bench/gc-trace.mjs"
// --invocation-stdout <file>` (NODE_OPTIONS does not accept the flag itself).
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--trace-gc-nvp');
