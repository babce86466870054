/**
 * Requests sent outside the pool (`Expect: 100-continue` on a one-off agent, as `@smithy/node-http-handler`): counted
 * per origin in `OriginState.unpooled`, never in the pool gauges, hold times or the saturation detector.
 */
import { countOutcome, UnpooledCounters } from "./origin-telemetry";
import type { RequestOutcome } from "./origin-telemetry";
import { type CountedRequest, type OriginState, outcomeOf } from "./tracking-state";

/** What the unpooled counting reads and writes of a request (the handler's, or the standalone monitor's). @internal */
export interface UnpooledRequest extends CountedRequest {
  isUnpooled: boolean;
  readonly originState: OriginState | undefined;
}

/** Flags a new request as unpooled and counts it in its origin's `unpooled` block. @internal */
export function attachUnpooledRequest(st: UnpooledRequest): void {
  st.isUnpooled = true;
  const o = st.originState!;
  o.unpooledCounters ??= new UnpooledCounters();
  o.unpooledCounters.started++;
  o.unpooledCounters.inFlight++;
}

/** `'close'` of an unpooled request. @internal */
export function unpooledClosed(st: UnpooledRequest): RequestOutcome {
  const u = st.originState!.unpooledCounters!;
  u.inFlight--;
  const counted = outcomeOf(st);
  countOutcome(u, counted, 1);
  return counted;
}
