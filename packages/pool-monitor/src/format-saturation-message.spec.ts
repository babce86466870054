import { describe, expect, it } from "vitest";
import { formatSaturationMessage } from "./format-saturation-message";
import type { SaturationReport } from "./pool-stats";

/** A recovery report of an `unconsumed_bodies` episode (the fields the recovery line reads). */
function recovery(reclaimed: number): SaturationReport {
  return {
    origin: "http://127.0.0.1:8080",
    state: "ok",
    previousState: "saturated",
    cause: null,
    previousCause: "unconsumed_bodies",
    queued: 0,
    active: 1,
    maxSockets: 4,
    reclaimed,
  } as SaturationReport;
}

describe("formatSaturationMessage: bodies reclaimed during the episode", () => {
  it("ends the report with one line naming them, worded for the transport's slot", () => {
    const line = "3 responses were dropped unread; their connections were reclaimed.";
    expect(formatSaturationMessage(recovery(3))).toBe(
      `http://127.0.0.1:8080 recovered from saturated (unconsumed_bodies): 0 requests enqueued, 1 sockets in use (maxSockets=4). ${line}`
    );
    expect(formatSaturationMessage(recovery(1))).toMatch(
      / 1 response was dropped unread; its connection was reclaimed\.$/
    );
    const http2 = {
      slot: "stream slot",
      capacity: "maxSessionsPerOrigin",
      raise: "maxSessionsPerOrigin",
      sizing: false,
    };
    expect(formatSaturationMessage(recovery(2), http2)).toMatch(
      / 2 responses were dropped unread; their stream slots were reclaimed\.$/
    );
  });

  it("says nothing of them when none was reclaimed", () => {
    expect(formatSaturationMessage(recovery(0))).not.toMatch(/reclaimed/);
  });
});
