/**
 * The one `FinalizationRegistry` of response bodies, held value: the source feeding the body. One per module, not per
 * handler: a registry that is itself collected never runs its callbacks, so a dropped handler's bodies would pin a
 * shared agent's sockets. A body is never unregistered: a finished source ignores the call.
 */
/** What a body is registered with: the request feeding it (`BodySource` extends it). @internal */
export interface ReclaimableSource {
  /** Its body was collected (see `BodySource.bodyCollected`). */
  bodyCollected(): void;
}

function onBodyCollected(source: ReclaimableSource): void {
  try {
    source.bodyCollected();
  } catch {} // a finalization task has no caller: a throw would be uncaught
}

const registry = new FinalizationRegistry<ReclaimableSource>(onBodyCollected);

/** Registers `body` for reclaim: `source.bodyCollected()` runs once it is collected. @internal */
export function watchForReclaim(body: object, source: ReclaimableSource): void {
  registry.register(body, source);
}
