/**
 * What `@smithy/node-http-handler` would have logged, at the same moments, on the same agent.
 *
 * Upstream arms one `setTimeout(W)` per request in `handle()` and clears it when the response arrives (or the
 * request fails). If it fires, it calls the static `NodeHttpHandler.checkSocketUsage(agent, lastTimestamp, logger)`:
 * a point-in-time check (`socketsInUse >= maxSockets && queued >= 2 × maxSockets`) with one 15 s lockout per
 * handler. This module reproduces exactly that, from the outside: an S3 middleware placed innermost (it wraps the
 * `requestHandler.handle()` call of each attempt) arms the timer, and the callback calls the REAL upstream static
 * method, keeping one lockout timestamp like one upstream handler would.
 *
 * What the method is given is the agent as upstream's own handler would have left it. Upstream hands every request to
 * the agent at once, so a request without a socket waits in `agent.requests[name]`. Sockeye keeps such requests in
 * its own queue, in front of the agent, and dispatches one only when a socket is free, so its `agent.requests` stays
 * empty and the real check, given the bare agent, would never see a queue. The method therefore gets the agent's
 * `sockets` and `maxSockets` as they are, and for `requests[name]` a list as long as the requests waiting for a socket
 * of that key in either queue (`queuedUnder`): the queue upstream's agent would hold at the same moment.
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
   * @param {(name: string) => number} options.queuedUnder requests waiting for a socket of agent key `name`
   *   (`agent.getName()`), in the handler's own queue and in `agent.requests`: where upstream's would all wait
   * @param {number} options.warningTimeoutMs W, the per-request delay before the check, ms
   * @param {(event: UpstreamEvent) => void} options.onEvent called for every warning and every silenced warning
   */
  constructor({ getAgent, queuedUnder, warningTimeoutMs, onEvent }) {
    this.getAgent = getAgent;
    this.queuedUnder = queuedUnder;
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
    const real = this.getAgent();
    if (real === undefined) return;
    const agent = this.asUpstreamSeesIt(real);
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

  /**
   * The three fields upstream's check reads, as upstream's handler would have left them: `sockets` and `maxSockets`
   * of the real agent, and per key with sockets a `requests` list as long as `queuedUnder(name)`.
   * @private @param {import("node:http").Agent} agent
   * @returns {import("node:http").Agent} only those three fields (upstream's check reads nothing else)
   */
  asUpstreamSeesIt(agent) {
    /** @type {Record<string, { length: number }>} */
    const requests = {};
    for (const name in agent.sockets) requests[name] = { length: this.queuedUnder(name) };
    const view = { sockets: agent.sockets, requests, maxSockets: agent.maxSockets };
    return /** @type {import("node:http").Agent} */ (/** @type {unknown} */ (view));
  }
}

/**
 * `queuedUnder` for a Sockeye handler on plain-HTTP origins: the agent key `host:port:` names the origin
 * `http://host:port`, whose `queued` in `getPoolStats()` counts the requests waiting in the handler's queue and in
 * `agent.requests` alike. One snapshot per call (a fired timer), never per request.
 * @param {{ getPoolStats(): { origins: Array<{ origin: string, queued: number }> } }} handler
 * @returns {(name: string) => number}
 */
export function queuedPerAgentKey(handler) {
  return (name) => {
    const [host, port] = name.split(":");
    const origin = `http://${host}:${port}`;
    return handler.getPoolStats().origins.find((o) => o.origin === origin)?.queued ?? 0;
  };
}

/**
 * A Smithy `Logger` that hands `warn` messages to `onWarn` and drops everything else.
 * @param {(message: string) => void} onWarn
 */
function capture(onWarn) {
  const ignore = () => {};
  return { debug: ignore, info: ignore, warn: onWarn, error: ignore };
}
