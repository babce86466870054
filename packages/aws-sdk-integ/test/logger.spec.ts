/**
 * Logger wiring through a real client. The SDK offers its `logger` to the handler with
 * `updateHttpClientConfig(Symbol.for("logger"), logger)`; the handler's own `logger` option wins over it; with
 * neither, warnings go to `console`. The warning is triggered deterministically: a `requestTimeout` (without
 * `throwOnRequestTimeout`) shorter than a local server's deliberate delay.
 */
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { dynamoDbClient } from "./support/aws-clients.js";
import { HANDLERS_UNDER_TEST, type HandlerInstance } from "./support/handlers-under-test.js";
import { RecordingLogger } from "./support/recording-logger.js";
import { type SlowServer, startSlowServer } from "./support/slow-server.js";
import { failOnUnhandledRejections } from "./support/unhandled-rejections.js";

failOnUnhandledRejections();

/** Answer delays: well past the 50 ms timeouts, and past a 250 ms one plus a scheduler tick (100 ms) and lag. */
const SHORT_DELAY_MS = 250;
const LONG_DELAY_MS = 550;
const getItem = (): GetItemCommand => new GetItemCommand({ TableName: "t", Key: { pk: { S: "k" } } });
const warningFor = (ms: number): string => `[WARN] a request has exceeded the configured ${ms} ms requestTimeout`;

describe.each(HANDLERS_UNDER_TEST)("logger wiring of the $name NodeHttpHandler", ({ NodeHttpHandler }) => {
  let short: SlowServer;
  let long: SlowServer;
  /** The server whose delay safely exceeds a `requestTimeout` of `ms`. */
  const serverFor = (ms: number): string => (ms < 200 ? short.endpoint : long.endpoint);
  const handlers: HandlerInstance[] = [];
  const track = (h: HandlerInstance): HandlerInstance => {
    handlers.push(h);
    return h;
  };

  beforeAll(async () => {
    short = await startSlowServer(SHORT_DELAY_MS);
    long = await startSlowServer(LONG_DELAY_MS);
  });
  afterEach(() => {
    vi.restoreAllMocks();
    for (const h of handlers.splice(0)) h.destroy();
  });
  afterAll(async () => {
    await short?.close();
    await long?.close();
  });

  it.each([50, 250])("the client's logger receives the %i ms requestTimeout warning (handler has none)", async (ms) => {
    const consoleWarn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const clientLogger = new RecordingLogger();
    const client = dynamoDbClient(track(new NodeHttpHandler({ requestTimeout: ms })), {
      endpoint: serverFor(ms),
      logger: clientLogger,
    });
    const output = await client.send(getItem());
    expect(output.$metadata.httpStatusCode).toBe(200);
    expect(clientLogger.warnings()).toEqual([expect.stringContaining(warningFor(ms))]);
    expect(consoleWarn).not.toHaveBeenCalled();
  });

  it("the handler's logger option wins over the client's logger", async () => {
    const consoleWarn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const clientLogger = new RecordingLogger();
    const handlerLogger = new RecordingLogger();
    const client = dynamoDbClient(track(new NodeHttpHandler({ requestTimeout: 50, logger: handlerLogger })), {
      endpoint: serverFor(50),
      logger: clientLogger,
    });
    await client.send(getItem());
    expect(handlerLogger.warnings()).toEqual([expect.stringContaining(warningFor(50))]);
    expect(clientLogger.warnings()).toEqual([]);
    expect(consoleWarn).not.toHaveBeenCalled();
  });

  it("a handler made with create() is wired the same way", async () => {
    const clientLogger = new RecordingLogger();
    const client = dynamoDbClient(track(NodeHttpHandler.create({ requestTimeout: 50 })), {
      endpoint: serverFor(50),
      logger: clientLogger,
    });
    await client.send(getItem());
    expect(clientLogger.warnings()).toEqual([expect.stringContaining(warningFor(50))]);
  });

  it("with no logger anywhere the warning goes to console.warn", async () => {
    const consoleWarn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const client = dynamoDbClient(track(new NodeHttpHandler({ requestTimeout: 50 })), { endpoint: serverFor(50) });
    await client.send(getItem());
    expect(consoleWarn).toHaveBeenCalledTimes(1);
    expect(String(consoleWarn.mock.calls[0]?.[0])).toContain(warningFor(50));
  });

  it("a request answered within its requestTimeout logs no warning", async () => {
    const clientLogger = new RecordingLogger();
    const client = dynamoDbClient(track(new NodeHttpHandler({ requestTimeout: 5_000 })), {
      endpoint: serverFor(50),
      logger: clientLogger,
    });
    await client.send(getItem());
    expect(clientLogger.warnings()).toEqual([]);
  });
});
