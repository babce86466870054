/**
 * The one `FinalizationRegistry` of response bodies: each body handed to a caller is registered with its source (the
 * request feeding it) as held value. When the body is garbage-collected, the source's `bodyCollected()` runs: a
 * source whose response is still open aborts it, frees the connection and counts the reclaim; one that had ended
 * does nothing.
 *
 * One registry per module, not per handler: a registry that is itself collected never runs its callbacks, so a
 * per-handler registry would stop reclaiming the bodies of a handler the program dropped while those bodies still pin
 * sockets of a shared agent; one registry also costs nothing per handler. A body is never unregistered: the cell goes
 * with the body, and a finished source ignores the call.
 */
/** What a body is registered with: the request feeding it (`BodySource` extends it). @internal */
export interface ReclaimableSource {
  /** Its body was collected (see `BodySource.bodyCollected`). */
  bodyCollected(): void;
}

function onBodyCollected(source: ReclaimableSource): void {
  try {
    source.bodyCollected();
  } catch {
    // A finalization task has no caller: a throw here would be an uncaught exception.
  }
}

const registry = new FinalizationRegistry<ReclaimableSource>(onBodyCollected);

/** Registers `body` for reclaim: `source.bodyCollected()` runs once it is collected. @internal */
export function watchForReclaim(body: object, source: ReclaimableSource): void {
  registry.register(body, source);
}
