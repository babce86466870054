/**
 * Full garbage collections for the tests of every package: leak checks (`heapUsedAfterGc`) and dropped response
 * bodies (`collectGarbage`). The test projects do not run node with `--expose-gc`, so the flag is set at run time
 * (`v8.setFlagsFromString`) and `gc` is taken from a fresh context (`vm.runInNewContext`), where V8 installs it once
 * the flag is on.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

let gc: (() => void) | undefined;

function collector(): () => void {
  if (gc === undefined) {
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("gc") as () => void;
  }
  return gc;
}

/**
 * One full collection, then a turn of the event loop, so finalization callbacks (`FinalizationRegistry`) and the
 * closes they start can run.
 */
export async function collectGarbage(): Promise<void> {
  collector()();
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
}

/** Bytes of heap used after two full collections (the second one collects what finalizers of the first freed). */
export async function heapUsedAfterGc(): Promise<number> {
  const collect = collector();
  collect();
  // Let pending callbacks (socket closes, stream destroys) run, then collect what they released.
  await new Promise((resolve) => setImmediate(resolve));
  collect();
  return process.memoryUsage().heapUsed;
}
