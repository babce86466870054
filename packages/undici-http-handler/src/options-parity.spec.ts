/**
 * The same options through NodeHttpHandler and UndiciHttpHandler: a bad value fails on both, at construction, with
 * the same error class and the same one-line message (only the package name differs); what one accepts (`null` as
 * unset, `saturation: null`) the other accepts too; `updateHttpClientConfig()` checks a value as the constructor does.
 * NodeHttp2Handler throws the same for the options it shares.
 */
import http from "node:http";
import https from "node:https";
import { NodeHttp2Handler, NodeHttpHandler } from "@sockeye/node-http-handler";
import { describe, expect, it } from "vitest";
import { UndiciHttpHandler } from "./undici-http-handler";

type Outcome = { ok: true } | { ok: false; name: string; message: string };

function construct(Handler: new (options?: any) => { destroy(): void }, options: unknown): Outcome {
  try {
    new Handler(options).destroy();
    return { ok: true };
  } catch (error) {
    const e = error as Error;
    return { ok: false, name: e.name, message: e.message.replace(/^@sockeye\/[a-z0-9-]+/, "<pkg>") };
  }
}

const BAD: Array<[string, unknown, RegExp]> = [
  ["options: 5", 5, /^<pkg> - invalid options: 5; expected an options object or a provider function\.$/],
  ["options: a string", "x", /^<pkg> - invalid options: "x"/],
  ["socketMonitor: null", { socketMonitor: null }, /^<pkg> - invalid option socketMonitor: null; expected one of/],
  ["socketMonitor: 'sometimes'", { socketMonitor: "sometimes" }, /invalid option socketMonitor: "sometimes"/],
  ["saturation: 5", { saturation: 5 }, /^<pkg> - invalid option saturation: 5; expected an object/],
  [
    "saturation.sampleIntervallMs (misspelt)",
    { saturation: { sampleIntervallMs: 500 } },
    /unknown option saturation\.sampleIntervallMs; saturation takes sampleIntervalMs, windowSamples/,
  ],
  [
    "requestTimeout: a 5,000-character string",
    { requestTimeout: "x".repeat(5000) },
    /invalid option requestTimeout: "x{40}…"; expected/,
  ],
  [
    "saturation.windowSamples: 1",
    { saturation: { windowSamples: 1 } },
    /invalid option saturation\.windowSamples: 1; expected an integer from 3 to 60/,
  ],
  [
    "httpAgent.maxSockets: -5",
    { httpAgent: { maxSockets: -5 } },
    /invalid option httpAgent\.maxSockets: -5; expected an integer >= 1 or Infinity\.$/,
  ],
  ["httpsAgent.maxSockets: 0", { httpsAgent: { maxSockets: 0 } }, /invalid option httpsAgent\.maxSockets: 0;/],
  ["httpsAgent.maxSockets: '10'", { httpsAgent: { maxSockets: "10" } }, /invalid option httpsAgent\.maxSockets: "10";/],
  ["httpsAgent.maxSockets: 1.5", { httpsAgent: { maxSockets: 1.5 } }, /invalid option httpsAgent\.maxSockets: 1\.5;/],
  [
    "httpsAgent.maxSockets: NaN",
    { httpsAgent: { maxSockets: Number.NaN } },
    /invalid option httpsAgent\.maxSockets: NaN;/,
  ],
  [
    "an Agent instance with maxSockets: -5",
    { httpsAgent: new https.Agent({ maxSockets: -5 }) },
    /invalid option httpsAgent\.maxSockets: -5;/,
  ],
  [
    "httpsAgent.maxFreeSockets: -1",
    { httpsAgent: { maxFreeSockets: -1 } },
    /invalid option httpsAgent\.maxFreeSockets: -1;/,
  ],
  [
    "httpAgent.maxTotalSockets: 0",
    { httpAgent: { maxTotalSockets: 0 } },
    /invalid option httpAgent\.maxTotalSockets: 0;/,
  ],
  ["httpsAgent.timeout: -1", { httpsAgent: { timeout: -1 } }, /invalid option httpsAgent\.timeout: -1;/],
  [
    "httpsAgent.keepAliveMsecs: -1",
    { httpsAgent: { keepAliveMsecs: -1 } },
    /invalid option httpsAgent\.keepAliveMsecs: -1;/,
  ],
  ["httpsAgent.keepAlive: 'yes'", { httpsAgent: { keepAlive: "yes" } }, /invalid option httpsAgent\.keepAlive: "yes";/],
  [
    "httpsAgent.scheduling: 'x'",
    { httpsAgent: { scheduling: "x" } },
    /invalid option httpsAgent\.scheduling: "x"; expected "fifo" or "lifo"\.$/,
  ],
  [
    "httpsAgent: 5",
    { httpsAgent: 5 },
    /invalid option httpsAgent: 5; expected an Agent instance or Agent options object\.$/,
  ],
  ["httpAgent: 'x'", { httpAgent: "x" }, /invalid option httpAgent: "x";/],
  [
    "telemetry: 'yes'",
    { telemetry: "yes" },
    /invalid option telemetry: "yes"; expected a boolean \(true or false\)\.$/,
  ],
  ["throwOnRequestTimeout: 1", { throwOnRequestTimeout: 1 }, /invalid option throwOnRequestTimeout: 1;/],
  ["onSaturation: 5", { onSaturation: 5 }, /^<pkg> - invalid option onSaturation: 5; expected a function\.$/],
  ["onRecovery: 'x'", { onRecovery: "x" }, /invalid option onRecovery: "x";/],
  ["logger: 5", { logger: 5 }, /invalid option logger: 5;/],
  ["requestTimeout: -1", { requestTimeout: -1 }, /invalid option requestTimeout: -1;/],
  ["connectionTimeout: '5s'", { connectionTimeout: "5s" }, /invalid option connectionTimeout: "5s";/],
  ["idleSocketTimeout: NaN", { idleSocketTimeout: Number.NaN }, /invalid option idleSocketTimeout: NaN;/],
];

const ACCEPTED: Array<[string, unknown]> = [
  ["nothing", undefined],
  ["options: null", null],
  ["saturation: null", { saturation: null }],
  ["telemetry: null", { telemetry: null }],
  ["throwOnRequestTimeout: null", { throwOnRequestTimeout: null }],
  ["onSaturation: null", { onSaturation: null }],
  ["logger: null", { logger: null }],
  ["httpsAgent: null", { httpsAgent: null }],
  ["requestTimeout: null", { requestTimeout: null }],
  ["requestTimeout: '5000' (an environment variable)", { requestTimeout: "5000" }],
  ["maxSockets: Infinity", { httpsAgent: { maxSockets: Number.POSITIVE_INFINITY } }],
  ["an http.Agent instance", { httpAgent: new http.Agent({ maxSockets: 3 }) }],
];

describe("option validation parity: NodeHttpHandler and UndiciHttpHandler", () => {
  it.each(BAD)("%s: the same one-line error on both", (_name, options, pattern) => {
    const node = construct(NodeHttpHandler, options);
    const undici = construct(UndiciHttpHandler, options);
    expect(node.ok).toBe(false);
    expect(undici).toEqual(node);
    const { message, name } = undici as { name: string; message: string };
    expect(message).toMatch(pattern);
    expect(message).not.toContain("\n");
    expect(["TypeError", "RangeError"]).toContain(name);
  });

  /** The rows whose options NodeHttp2Handler shares (it has no agents); the options themselves included. */
  const SHARED_WITH_HTTP2 = BAD.filter(
    ([name]) => !/^(httpAgent|httpsAgent|an Agent|throwOnRequestTimeout|idleSocketTimeout)\b/.test(name)
  );

  it.each(SHARED_WITH_HTTP2)("%s: NodeHttp2Handler throws the same one-line error", (_name, options) => {
    const node = construct(NodeHttpHandler, options);
    expect(node.ok).toBe(false);
    expect(construct(NodeHttp2Handler, options)).toEqual(node);
  });

  it.each(ACCEPTED)("%s: accepted by both", (_name, options) => {
    expect(construct(NodeHttpHandler, options)).toEqual({ ok: true });
    expect(construct(UndiciHttpHandler, options)).toEqual({ ok: true });
  });

  it.each([
    ["requestTimeout", "abc"],
    ["socketMonitor", null],
    ["telemetry", "yes"],
    ["onSaturation", 5],
    ["saturation", 5],
    ["saturation", { sampleIntervallMs: 500 }],
    ["saturation", { windowSamples: 1 }],
  ])("updateHttpClientConfig(%j, %j) throws the same on all three", (key, value) => {
    const messages = [new NodeHttpHandler(), new UndiciHttpHandler(), new NodeHttp2Handler()].map((h) => {
      try {
        h.updateHttpClientConfig(key as any, value);
        return "accepted";
      } catch (error) {
        return (error as Error).message.replace(/^@sockeye\/[a-z0-9-]+/, "<pkg>");
      } finally {
        h.destroy();
      }
    });
    expect(messages[0]).not.toBe("accepted");
    expect(messages[1]).toBe(messages[0]);
    expect(messages[2]).toBe(messages[0]);
  });
});

describe("request validation parity: the three handlers reject a bad request alike, before any socket", () => {
  const target = { protocol: "http:", hostname: "127.0.0.1", path: "/", method: "GET", headers: {} };
  const BAD_REQUESTS: Array<[string, unknown, string]> = [
    ["null", null, "<pkg> - handle(request) expects an HttpRequest; received null."],
    ["a string", "http://x", '<pkg> - handle(request) expects an HttpRequest; received "http://x".'],
    [
      "port 70000",
      { ...target, port: 70000 },
      "<pkg> - invalid request port: 70000; expected an integer from 1 to 65535 (or none for the protocol's default).",
    ],
    [
      "port 'abc'",
      { ...target, port: "abc" },
      `<pkg> - invalid request port: "abc"; expected an integer from 1 to 65535 (or none for the protocol's default).`,
    ],
    [
      "an empty hostname",
      { ...target, hostname: "" },
      '<pkg> - invalid request hostname: ""; expected a non-empty host name or IP address.',
    ],
  ];

  it.each(BAD_REQUESTS)("%s: a TypeError rejection with the same one-line message", async (_name, request, message) => {
    for (const Handler of [NodeHttpHandler, NodeHttp2Handler, UndiciHttpHandler]) {
      const handler = new Handler();
      try {
        const error = await handler.handle(request as never).then(
          () => undefined,
          (e: Error) => e
        );
        expect(error, Handler.name).toBeInstanceOf(TypeError);
        expect((error as Error).message.replace(/^@sockeye\/[a-z0-9-]+/, "<pkg>"), Handler.name).toBe(message);
      } finally {
        handler.destroy();
      }
    }
  });
});
