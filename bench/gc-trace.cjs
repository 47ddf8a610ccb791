// V8's trace of every garbage collection, one line of name=value pairs each (pause, the phases,
// bytes promoted and survived), on stdout: preloaded into each fire invocation with
// `npm run bench:fire-lateness -- --node-options "--require $PWD/bench/gc-trace.cjs"
// --invocation-stdout <file>` (NODE_OPTIONS does not accept the flag itself).
require('node:v8').setFlagsFromString('--trace-gc-nvp');
