/**
 * A full garbage collection on demand. `npm run demo` starts node with `--expose-gc`, so `globalThis.gc` exists; when
 * it does not (a test runner), the flag is set at run time and `gc` is taken from a fresh context, where V8 installs
 * it once the flag is on.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** @type {(() => void) | undefined} */
let gc;

/**
 * Runs a full collection, lets the callbacks it scheduled run (finalizers, socket closes), and collects once more.
 * @returns {Promise<void>}
 */
export async function collectGarbage() {
  if (gc === undefined) {
    if (typeof globalThis.gc === "function") gc = /** @type {() => void} */ (globalThis.gc);
    else {
      setFlagsFromString("--expose-gc");
      gc = /** @type {() => void} */ (runInNewContext("gc"));
    }
  }
  gc();
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  await new Promise((resolve) => setImmediate(resolve));
}
