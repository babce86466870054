import type { SaturationReport } from "./pool-stats";
import { STALL_HOLD_FACTOR } from "./detector-tuning";

/** The words a transport's saturation messages use: HTTP/2 counts stream slots and raises a session bound. @internal */
export interface SaturationTerms {
  /** What a request holds: `socket` or `stream slot` (plural adds `s`). */
  readonly slot: string;
  /** Label of the capacity in the head of the message, e.g. `maxSockets`. */
  readonly capacity: string;
  /** The option to raise, with its value, e.g. `maxSessionsPerOrigin (now 4)`. */
  readonly raise: string;
  /** Whether the report carries a socket-count recommendation (`false`: it is cleared). */
  readonly sizing: boolean;
}

const SOCKET_TERMS: SaturationTerms = { slot: "socket", capacity: "maxSockets", raise: "maxSockets", sizing: true };

/**
 * The human-readable line for a report (without the logger prefix). A non-ok state always contains upstream's phrase
 * `socket usage at capacity=<active> and <queued> additional requests are enqueued`, which log alerts match. @public
 */
export function formatSaturationMessage(r: SaturationReport, terms: SaturationTerms = SOCKET_TERMS): string {
  const line = describeReport(r, terms);
  return r.reclaimed > 0 ? `${line} ${reclaimedLine(r.reclaimed, terms.slot)}` : line;
}

/** The episode's reclaimed bodies, e.g. "3 responses were dropped unread; their connections were reclaimed." */
function reclaimedLine(count: number, slot: string): string {
  const what = slot === "socket" ? "connections" : `${slot}s`;
  return count === 1
    ? `1 response was dropped unread; its ${what.slice(0, -1)} was reclaimed.`
    : `${count} responses were dropped unread; their ${what} were reclaimed.`;
}

function describeReport(r: SaturationReport, terms: SaturationTerms): string {
  const slot = terms.slot;
  const limit = `${terms.capacity}=${r.maxSockets ?? "Infinity"}`;
  if (r.state === "ok") {
    return `${r.origin} recovered from ${r.previousState}${r.previousCause === null ? "" : ` (${r.previousCause})`}: ${r.queued} requests enqueued, ${r.active} ${slot}s in use (${limit}).`;
  }
  const changed =
    r.previousState !== "ok" && r.previousCause !== null && r.previousCause !== r.cause
      ? ` Cause changed from ${r.previousCause}.`
      : "";
  const head =
    `${slot} usage at capacity=${r.active} and ${r.queued} additional requests are enqueued ` +
    `(origin=${r.origin}, ${limit}, state=${r.state}, oldest queued ${Math.round(r.oldestQueuedMs)} ms).${changed}`;
  const heldS = seconds(r.oldestActiveMs);
  const normally = `requests normally hold a ${slot}`;
  const release = `so hung requests fail and release their ${slot}s`;
  const normalHold =
    r.expectedHoldMs === null
      ? "no request of this origin has completed yet"
      : `its ${normally} up to ${seconds(r.expectedHoldMs)} s`;
  const timeouts = "requestTimeout/socketTimeout";
  switch (r.cause) {
    case "unconsumed_bodies":
      return (
        `${head} Cause: ${r.unconsumed.count} responses handed to the caller have not been read or destroyed ` +
        `(oldest ${Math.round(r.unconsumed.oldestMs)} ms) and pin their ${slot}s. Consume or destroy every response body ` +
        `(e.g. S3 GetObject Body), or set unreadBodyTimeout on a Sockeye handler so a body left unread that long is ` +
        `destroyed and its ${slot} freed; raising ${terms.raise} would only delay the exhaustion.`
      );
    case "no_progress":
      return (
        `${head} Cause: no request completed while every ${slot} is busy, and the oldest has held its ${slot} ${heldS} s, ` +
        `past this origin's stall deadline of ${seconds(r.stallDeadlineMs)} s (${normalHold}); the server may not be ` +
        `answering. Configure ${timeouts} ${release}.`
      );
    default: {
      let why: string;
      const longHolds = r.trigger === "long_holds";
      if (longHolds) {
        const queueBehind = `requests queue behind ${slot}s held for ${heldS} s so far with no completion`;
        const longRequests = `long requests (long polls, streams), which need a ${slot} each for their whole duration`;
        const becomesStall = `becomes no_progress once a request is held ${seconds(r.stallDeadlineMs)} s.`;
        if (r.expectedHoldMs !== null && r.oldestActiveMs > STALL_HOLD_FACTOR * r.expectedHoldMs) {
          why =
            `${queueBehind}, ${Math.round(r.oldestActiveMs / r.expectedHoldMs)}x longer than this origin's ${normally} ` +
            `(up to ${duration(r.expectedHoldMs)}): the server may not be answering, or these ` +
            `are ${longRequests}. If the server is not answering, configure ${timeouts} above your longest legitimate ` +
            `request ${release}; this ${becomesStall}`;
        } else {
          why = `${queueBehind} (${normalHold}): either ${longRequests}, or a server not answering, which ${becomesStall}`;
        }
      } else {
        why =
          `${r.trigger === "rising_troughs" ? "the backlog never drains between bursts" : "the queue keeps growing"} ` +
          `(arrivals ${r.arrivalRate.toFixed(1)}/s, throughput ${r.throughput.toFixed(1)}/s over ${seconds(r.windowMs)} s, mean ${slot} hold ` +
          `${r.meanHoldMs === null ? "n/a" : `${Math.round(r.meanHoldMs)} ms`}).`;
      }
      const z = r.sizing;
      let hint = terms.sizing ? "" : ` Raise ${terms.raise} or limit concurrency.`;
      if (z !== null && terms.sizing) {
        const basis =
          z.method === "littles_law"
            ? `by Little's law, ${z.ratePerSec?.toFixed(1)} requests/s × ${Math.round(z.holdMs)} ms held`
            : `${z.needed} requests want a ${slot} now (${r.active} in use + ${r.queued} queued, the oldest held ${seconds(z.holdMs)} s)`;
        hint =
          ` ${longHolds ? "If these are long requests, about" : "About"} ${z.recommended} sockets are needed ` +
          `(${basis}, +25 % headroom): raise maxSockets to ${z.recommended} or limit concurrency.`;
      }
      return `${head} Cause: ${why}${hint}`;
    }
  }
}

/** ms as seconds, one decimal. */
function seconds(ms: number): string {
  return (ms / 1000).toFixed(1);
}

/** `850 ms` below a second, `1.5 s` from there. */
function duration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${seconds(ms)} s`;
}
