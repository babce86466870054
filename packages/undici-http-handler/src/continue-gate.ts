/**
 * ContinueGate: holds an `Expect: 100-continue` request body until the server's `100 Continue`, as
 * `NodeHttpHandler` (and upstream) do, for the 100-continue path's own `node:http(s)` agents.
 *
 * Why it exists: the 100-continue path needs agents that carry the handler's TLS / socket options (`ca`, client
 * certificate, `lookup`…), and `NodeHttpHandler` treats any agent instance as the caller's and then writes the
 * body at once (upstream's rule for external agents). The gate is the `Readable` body `NodeHttpHandler` pipes into
 * its `ClientRequest`: `pipe()` does not forward anything but waits for, whichever comes first,
 *   'continue'                  → write the real body (pipe a stream, end with a buffer / string);
 *   the wait deadline           → write it anyway: max(6 s, requestTimeout), upstream's race;
 *   'response' / 'close'        → never write it (the server answered early, e.g. 417 / 413, or the request ended).
 *
 * Cost: per 100-continue request (large uploads only) one gate object, three listeners and one `Deadline` on the
 * handler's shared scheduler; no native timer.
 */
import type { ClientRequest } from "node:http";
import { Readable } from "node:stream";
import { Deadline, type DeadlineOwner, type DeadlineScheduler, writeBody } from "@sockeye/node-http-handler/internal";
import { timing } from "@sockeye/pool-monitor";

/** Upstream's minimum wait for `100 Continue` before the body is sent anyway, ms. @internal */
export const MIN_CONTINUE_WAIT_MS = 6000;

/** @internal */
export class ContinueGate extends Readable implements DeadlineOwner {
  private req: ClientRequest | undefined = undefined;
  private readonly wait: Deadline;
  private done = false;
  private readonly onContinue = (): void => this.release(true);
  private readonly onStop = (): void => this.release(false);

  /**
   * @param body - the Smithy request body (Readable, Buffer, string, ArrayBufferView or nothing).
   * @param waitMs - how long to wait for `100 Continue` before sending the body anyway.
   */
  constructor(
    private readonly body: unknown,
    private readonly scheduler: DeadlineScheduler,
    private readonly waitMs: number
  ) {
    super();
    this.wait = new Deadline(this, 1);
  }

  override _read(): void {}

  /** Called by `NodeHttpHandler` with its `ClientRequest`: starts waiting instead of writing. */
  override pipe<T extends NodeJS.WritableStream>(destination: T): T {
    const req = destination as unknown as ClientRequest;
    this.req = req;
    req.once("continue", this.onContinue);
    req.once("response", this.onStop);
    req.once("close", this.onStop);
    this.scheduler.arm(this.wait, timing.now(), this.waitMs);
    return destination;
  }

  onDeadline(): void {
    this.release(true);
  }

  private release(send: boolean): void {
    if (this.done) return;
    this.done = true;
    this.scheduler.cancel(this.wait);
    const req = this.req as ClientRequest;
    req.removeListener("continue", this.onContinue);
    req.removeListener("response", this.onStop);
    req.removeListener("close", this.onStop);
    if (send && !req.destroyed) writeBody(req, this.body);
  }
}
