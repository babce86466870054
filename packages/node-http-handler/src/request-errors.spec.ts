import { Agent } from "node:http";
import { describe, expect, test as it } from "vitest";
import {
  acquisitionTimeoutError,
  closedBeforeResponseError,
  connectionTimeoutError,
  handlerDestroyedDuringSetupError,
  handlerDestroyedError,
  idleTimeoutError,
  requestTimeoutError,
  requestTimeoutMessage,
} from "./request-errors";
import type { RequestPlan } from "./request-plan";

const agent = new Agent({ maxSockets: 3 });
const plan = {
  agent,
  connectionTimeout: 1000,
  requestTimeout: 2000,
  throwOnRequestTimeout: true,
  socketTimeout: 3000,
  socketTimeoutIsServiceDefault: false,
  socketAcquisitionTimeout: 500,
} as RequestPlan;

describe("request errors", () => {
  it("timeouts are TimeoutErrors with upstream's wording and the configured value", () => {
    expect(connectionTimeoutError(plan, false)).toMatchObject({ name: "TimeoutError" });
    expect(connectionTimeoutError(plan, false).message).toContain("within the configured timeout of 1000 ms.");
    expect(connectionTimeoutError(plan, true).message).toContain(
      "still waiting for a free socket (maxSockets=3, 0 requests queued)"
    );
    expect(requestTimeoutError(plan)).toMatchObject({ name: "TimeoutError", code: "ETIMEDOUT" });
    expect(requestTimeoutMessage({ ...plan, throwOnRequestTimeout: false })).toContain("[WARN]");
    expect(acquisitionTimeoutError(plan, 512.4).message).toContain("waited 512 ms for a free socket");
    expect(idleTimeoutError(plan).message).toContain("3000 ms of inactivity (configured by client requestHandler)");
    expect(closedBeforeResponseError()).toMatchObject({ name: "TimeoutError", code: "ECONNRESET" });
  });

  it("destroy() errors are named, coded and say the handler was destroyed and where the request was", () => {
    const queued = handlerDestroyedError(agent, true);
    expect(queued).toMatchObject({ name: "HandlerDestroyedError", code: "ERR_HANDLER_DESTROYED" });
    expect(queued.message).toContain("the handler was destroyed (destroy() was called) while it was waiting");
    expect(handlerDestroyedError(agent, false).message).toContain("while the request was in flight");
    const setup = handlerDestroyedDuringSetupError();
    expect(setup).toMatchObject({ name: "HandlerDestroyedError", code: "ERR_HANDLER_DESTROYED" });
    expect(setup.message).toContain("while handle() was still resolving the handler config or creating its http agent");
    expect(setup.message).toContain("no new connection is opened for it");
  });
});
