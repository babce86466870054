/**
 * Cross-handler fault suite: every scenario of `fault-scenarios.ts` through Sockeye's `NodeHttpHandler` and
 * `UndiciHttpHandler`, upstream `@smithy/node-http-handler` 4.14.2 and `@smithy/undici-http-handler` 3.2.4, one
 * test per (server kind, scenario, handler), on fresh real loopback http and https servers.
 *
 * Each run is asserted in three tests against what `fault-expectations.ts` records for that handler: every
 * request's outcome shape and error message class; the connections the servers accepted; and what is left after
 * `destroy()` (unsettled promises, open connections, abort listeners, ref'd timers and handles, uncaught exceptions, unhandled
 * rejections; for Sockeye's handlers also their in-flight and queued counts, armed deadlines and interval).
 *
 * `SOCKEYE_FAULT_PRINT=1` prints every run's observed result (to write or review the table).
 */
import { NodeHttpHandler as SmithyNodeHttpHandler } from "@smithy/node-http-handler";
import { UndiciHttpHandler as SmithyUndiciHttpHandler } from "@smithy/undici-http-handler";
// Its sources, not its dist: the run reads the handler's private scheduler (`sockeyeInternals()`), which the dist renames.
import { NodeHttpHandler } from "../../node-http-handler/src/index";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processFaultCapture } from "../../node-http-handler/test/process-fault-capture";
import type { ServerKind } from "../../node-http-handler/test/servers";
import { UndiciHttpHandler } from "../src/index";
import { expectationFor } from "./fault-expectations";
import { type FaultRunResult, runFault } from "./fault-run";
import { FAULT_SCENARIOS } from "./fault-scenarios";
import { HANDLER_KEYS, type HandlerClasses } from "./handler-matrix";

const CLASSES = {
  "sockeye-node": NodeHttpHandler,
  "sockeye-undici": UndiciHttpHandler,
  "smithy-node": SmithyNodeHttpHandler,
  "smithy-undici": SmithyUndiciHttpHandler,
} as unknown as HandlerClasses;

const capture = processFaultCapture();
beforeAll(() => capture.install());
afterAll(() => capture.uninstall());

const KINDS: ServerKind[] = ["http", "https"];

for (const kind of KINDS) {
  describe(`fault suite over ${kind}: Sockeye node / Sockeye undici / @smithy node / @smithy undici`, () => {
    for (const scenario of FAULT_SCENARIOS) {
      if (scenario.kinds !== undefined && !scenario.kinds.includes(kind)) continue;
      for (const key of scenario.handlers ?? HANDLER_KEYS) {
        const expected = expectationFor(scenario.id, key, kind);
        describe(`${scenario.title} [${key}]`, () => {
          let result: FaultRunResult;
          beforeAll(async () => {
            result = await runFault(CLASSES, key, kind, scenario, capture);
            if (process.env.SOCKEYE_FAULT_PRINT) console.log(JSON.stringify({ kind, id: scenario.id, key, ...result }));
          });
          it("every promise settles, with the recorded outcome and error shape", () => {
            expect(result.outcomes).toEqual(expected.outcomes);
            expected.messages?.forEach((pattern, i) => {
              if (pattern !== undefined) expect(result.messages[i]).toMatch(pattern);
            });
          });
          it("connections opened as recorded (and none left handshaking)", () => {
            expect(result.connections).toBe(expected.connections);
            expect(result.notes).toMatchObject(expected.notes ?? {});
          });
          it("no uncaught exception; nothing left after destroy()", () => {
            expect(result.left).toEqual({
              pending: 0,
              openConnections: 0,
              abortListeners: 0,
              refTimers: 0,
              refHandles: 0,
              uncaught: [],
              unhandled: [],
              ...expected.left,
            });
            if (result.internal !== undefined) {
              expect(result.internal).toEqual({ inFlight: 0, queued: 0, armed: 0, ticking: false });
            }
          });
        });
      }
    }
  });
}
