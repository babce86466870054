/**
 * A response body the handler destroyed with an error before anyone read it (`unreadBodyTimeout`) must still fail
 * its later reader: `for await`, `pipeline` and `finished` read `errored` themselves, but `pipe()` plus an `'error'`
 * listener (the SDK's stream collector behind `transformToString()`) would wait for ever on a stream destroyed
 * before they attached. So the first `'error'` listener added afterwards gets the error, on the next tick (once it is
 * in place). One shared hook, on the failure path only.
 */
import type { Readable } from "node:stream";

function emitErrorLate(body: Readable): void {
  const error = body.errored;
  if (error !== null && error !== undefined && body.listenerCount("error") > 0) body.emit("error", error);
}

function onNewListener(this: Readable, event: string | symbol): void {
  if (event !== "error") return;
  this.off("newListener", onNewListener);
  process.nextTick(emitErrorLate, this);
}

/** After `body.destroy(error)`: the next `'error'` listener added to `body` gets `error` (see the header). @internal */
export function deliverBodyErrorLate(body: Readable): void {
  body.on("newListener", onNewListener);
}
