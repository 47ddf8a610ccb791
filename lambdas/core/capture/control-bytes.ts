/**
 * "Is any byte below 0x20?" sixteen bytes at a time, in WebAssembly SIMD.
 *
 * json-check.ts asks this of every JSON body the parser accepts (a byte below 0x20 is the only
 * way a raw control character can sit in a body, and when there is none the strings need no
 * search for one). The best plain-JS loop (json-check.ts `hasControlByteWords`) was the largest
 * single cost of the body check; Wasm reads only its own memory, so each body is copied into a
 * 64 KiB scratch page (bytes just written, still in cache) and scanned there, faster copy
 * included (bench/RESULTS.md, "Wasm control scan"). The module is 148 bytes, its text beside
 * MODULE_BASE64; test/unit/capture/control-bytes.test.ts holds it to the JS loop byte for byte.
 * Engines without WebAssembly SIMD (node --jitless) get null and the JS loop; Node 22 has it.
 */

/** The little of the WebAssembly API used here (the project's `lib` has no DOM types, where it lives). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (
    module: object,
  ) => { exports: { memory: { buffer: ArrayBuffer }; ctl: (at: number, length: number) => number } };
}

/**
 * The module, from this text:
 *
 *   (module
 *     (memory (export "memory") 1)
 *     (func (export "ctl") (param $p i32) (param $n i32) (result i32)
 *       (local $end i32) (local $acc v128) (local $lim v128)
 *       (local.set $end (i32.add (local.get $p) (local.get $n)))
 *       (local.set $lim (i8x16.splat (i32.const 0x20)))
 *       (block (loop            ;; whole 16-byte blocks: acc |= (block <u 0x20)
 *         (br_if 1 (i32.gt_u (i32.add (local.get $p) (i32.const 16)) (local.get $end)))
 *         (local.set $acc (v128.or (local.get $acc) (i8x16.lt_u (v128.load (local.get $p)) (local.get $lim))))
 *         (local.set $p (i32.add (local.get $p) (i32.const 16)))
 *         (br 0)))
 *       (block (loop            ;; the last 0-15 bytes one by one
 *         (br_if 1 (i32.ge_u (local.get $p) (local.get $end)))
 *         (if (i32.lt_u (i32.load8_u (local.get $p)) (i32.const 0x20)) (then (return (i32.const 1))))
 *         (local.set $p (i32.add (local.get $p) (i32.const 1)))
 *         (br 0)))
 *       (v128.any_true (local.get $acc))))
 */
const MODULE_BASE64 =
  'AGFzbQEAAAABBwFgAn9/AX8DAgEABQMBAAEHEAIGbWVtb3J5AgADY3RsAAAKZgFkAgF/AnsgACABaiECQSD9DyEEAkADQCAAQRBqIAJLDQ' +
  'EgAyAA/QAAACAE/Sb9UCEDIABBEGohAAwACwsCQANAIAAgAk8NASAALQAAQSBJBEBBAQ8LIABBAWohAAwACwsgA/1TCw==';

/** A checker over the Wasm scratch page, or null where this engine cannot run the module. */
export function createSimdControlCheck(): ((bytes: Uint8Array) => boolean) | null {
  const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  let memory: { buffer: ArrayBuffer };
  let ctl: (at: number, length: number) => number;
  try {
    if (!wasm) return null;
    ({ memory, ctl } = new wasm.Instance(new wasm.Module(Buffer.from(MODULE_BASE64, 'base64'))).exports);
  } catch {
    return null;
  }
  // The memory never grows, so this view stays valid.
  const scratch = new Uint8Array(memory.buffer);
  const page = scratch.length;
  return (bytes) => {
    // A body larger than the page goes through it a page at a time.
    for (let at = 0; at < bytes.length; at += page) {
      const part = at === 0 && bytes.length <= page ? bytes : bytes.subarray(at, at + page);
      scratch.set(part, 0);
      if (ctl(0, part.length) !== 0) return true;
    }
    return false;
  };
}
