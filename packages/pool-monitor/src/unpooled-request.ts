/**
 * Requests sent outside the pool (`Expect: 100-continue` on a one-off agent, as `@smithy/node-http-handler`): counted
 * per origin in `OriginState.unpooled`, never in the pool gauges, hold times or the saturation detector.
 */
import type { Socket } from "node:net";
import { timing } from "./timing";
import { countOutcome, UnpooledCounters } from "./origin-telemetry";
import type { RequestOutcome } from "./origin-telemetry";
import { type CountedRequest, type OriginState, outcomeOf, type RequestState } from "./tracking-state";

/** What the unpooled counting reads and writes of a request (the handler's, or the standalone monitor's). @internal */
export interface UnpooledRequest extends CountedRequest {
  isUnpooled: boolean;
  readonly originState: OriginState | undefined;
}

const connectingSockets = new WeakMap<Socket, RequestState>();

/** Flags a new request as unpooled and counts it in its origin's `unpooled` block. @internal */
export function attachUnpooledRequest(st: UnpooledRequest): void {
  st.isUnpooled = true;
  const o = st.originState!;
  o.unpooledCounters ??= new UnpooledCounters();
  o.unpooledCounters.started++;
  o.unpooledCounters.inFlight++;
}

/** `'socket'` of an unpooled request: times the TCP connect of its (new) socket. @internal */
export function unpooledSocket(st: RequestState, socket: Socket): void {
  st.acquiredAt = timing.now();
  if (socket.connecting) {
    connectingSockets.set(socket, st);
    socket.once("connect", onUnpooledConnect);
  }
}

function onUnpooledConnect(this: Socket): void {
  const st = connectingSockets.get(this);
  if (st === undefined) return;
  connectingSockets.delete(this);
  if (st.core!.coreDestroyed) return;
  st.originState!.unpooledCounters?.connect.record(timing.now() - st.acquiredAt);
}

/** `'close'` of an unpooled request. @internal */
export function unpooledClosed(st: UnpooledRequest): RequestOutcome {
  const u = st.originState!.unpooledCounters!;
  u.inFlight--;
  const counted = outcomeOf(st);
  countOutcome(u, counted, 1);
  return counted;
}
