/**
 * What `@smithy/node-http-handler` would have logged, at the same moments, on the same agent.
 *
 * Upstream arms one `setTimeout(W)` per request in `handle()` and clears it when the response arrives (or the
 * request fails). If it fires, it calls the static `NodeHttpHandler.checkSocketUsage(agent, lastTimestamp, logger)`:
 * a point-in-time check (`socketsInUse >= maxSockets && queued >= 2 × maxSockets`) with one 15 s lockout per
 * handler. This module reproduces exactly that, from the outside: an S3 middleware placed innermost (it wraps the
 * `requestHandler.handle()` call of each attempt) arms the timer, and the callback calls the REAL upstream static
 * method on Sockeye's agent, keeping one lockout timestamp like one upstream handler would.
 *
 * It additionally asks the same upstream function, with a zero timestamp and a silent logger, whether its criteria
 * held when a timer fired during the lockout, so the demo can show "criteria met, but silenced by the lockout".
 * That second call never logs anything.
 *
 * Cost: one native timer and one closure per request, which is precisely upstream's per-request cost.
 */
import { NodeHttpHandler as UpstreamNodeHttpHandler } from "@smithy/node-http-handler";

/**
 * @typedef {object} UpstreamEvent
 * @property {"warn" | "suppressed"} kind `warn`: upstream would have logged `message`; `suppressed`: its criteria held
 *   but the 15 s lockout silenced it.
 * @property {number} at `performance.now()` ms
 * @property {string} message the exact upstream log text (`warn`), or the text the lockout silenced
 */

export class UpstreamCheckEmulator {
  /**
   * @param {object} options
   * @param {() => import("node:http").Agent | undefined} options.getAgent returns the agent the requests use
   * @param {number} options.warningTimeoutMs W, the per-request delay before the check
   * @param {(event: UpstreamEvent) => void} options.onEvent called for every warning and every silenced warning
   */
  constructor({ getAgent, warningTimeoutMs, onEvent }) {
    this.getAgent = getAgent;
    this.warningTimeoutMs = warningTimeoutMs;
    this.onEvent = onEvent;
    /** Upstream's `socketWarningTimestamp` (wall clock ms), one per handler. */
    this.socketWarningTimestamp = 0;
    this.armed = 0;
    this.fired = 0;
    this.warnings = 0;
    this.suppressed = 0;
    this.pending = 0;
    this.check = this.check.bind(this);
  }

  /**
   * Adds the emulation to a client: innermost middleware of the deserialize step, so the timer spans exactly the
   * `handle()` call of each attempt, as upstream's does.
   * @param {{ middlewareStack: { add: Function } }} client
   */
  install(client) {
    client.middlewareStack.add(
      (/** @type {(args: unknown) => Promise<unknown>} */ next) => async (/** @type {unknown} */ args) => {
        this.armed++;
        this.pending++;
        const timer = setTimeout(this.check, this.warningTimeoutMs);
        try {
          return await next(args);
        } finally {
          clearTimeout(timer);
          this.pending--;
        }
      },
      { step: "deserialize", priority: "low", name: "upstreamSocketCheckEmulation" }
    );
  }

  /** @private The body of upstream's per-request timer. */
  check() {
    this.fired++;
    const agent = this.getAgent();
    if (agent === undefined) return;
    let logged = "";
    const logger = capture((m) => {
      logged = m;
    });
    const before = this.socketWarningTimestamp;
    this.socketWarningTimestamp = UpstreamNodeHttpHandler.checkSocketUsage(agent, before, logger);
    if (this.socketWarningTimestamp !== before) {
      this.warnings++;
      this.onEvent({ kind: "warn", at: performance.now(), message: logged });
      return;
    }
    // Lockout active? Ask the same function whether its criteria hold right now (silent logger, no state kept).
    if (Date.now() - 15_000 < before) {
      let silenced = "";
      const probe = UpstreamNodeHttpHandler.checkSocketUsage(
        agent,
        0,
        capture((m) => {
          silenced = m;
        })
      );
      if (probe !== 0) {
        this.suppressed++;
        this.onEvent({ kind: "suppressed", at: performance.now(), message: silenced });
      }
    }
  }
}

/**
 * A Smithy `Logger` that hands `warn` messages to `onWarn` and drops everything else.
 * @param {(message: string) => void} onWarn
 */
function capture(onWarn) {
  const ignore = () => {};
  return { debug: ignore, info: ignore, warn: onWarn, error: ignore };
}
