/**
 * The handler implementations the suite runs against. Every spec file is written once, as a function of a
 * {@link HandlerUnderTest}, and repeated for each entry of {@link HANDLERS_UNDER_TEST}:
 * - `sockeye`: `@sockeye/node-http-handler` (required; the subject of the suite), imported from its built `dist/`.
 * - `upstream`: `@smithy/node-http-handler` (the oracle: the same assertions must hold for the original).
 *
 * `SOCKEYE_AWS_HANDLERS=sockeye` (comma-separated names) narrows the list; the default is both.
 */
import type { NodeHttpHandlerOptions as SockeyeOptions } from "@sockeye/node-http-handler";

/**
 * Options passed to either implementation: Sockeye's, which are upstream's plus Sockeye's own (`socketMonitor`,
 * `saturation`, `onSaturation`, ...); upstream ignores the keys it does not know.
 * @internal
 */
export type HandlerOptions = SockeyeOptions;

/** What the suite needs from a handler instance (structural, so both classes fit). @internal */
export interface HandlerInstance {
  readonly metadata: { handlerProtocol: string };
  handle(request: any, options?: any): Promise<{ response: any }>;
  destroy(): void;
  updateHttpClientConfig(key: any, value: any): void;
  httpHandlerConfigs(): object;
}

/** The handler class surface the suite uses: constructor and `create()`. @internal */
export interface HandlerClass {
  new (options?: HandlerOptions): HandlerInstance;
  create(instanceOrOptions?: HandlerInstance | HandlerOptions): HandlerInstance;
}

/** One implementation under test. @internal */
export interface HandlerUnderTest {
  /** `"sockeye"` or `"upstream"`. */
  readonly name: HandlerName;
  readonly NodeHttpHandler: HandlerClass;
}

/** @internal */
export type HandlerName = "sockeye" | "upstream";

const ALL: readonly HandlerName[] = ["sockeye", "upstream"];

function selectedNames(): HandlerName[] {
  const raw = process.env.SOCKEYE_AWS_HANDLERS;
  if (raw === undefined || raw.trim() === "") return [...ALL];
  const names = raw.split(",").map((s) => s.trim());
  for (const name of names) {
    if (!(ALL as readonly string[]).includes(name)) {
      throw new TypeError(
        `SOCKEYE_AWS_HANDLERS: unknown handler ${JSON.stringify(name)}; expected "sockeye" and/or "upstream".`
      );
    }
  }
  return names as HandlerName[];
}

async function load(name: HandlerName): Promise<HandlerUnderTest> {
  if (name === "upstream") {
    const mod = await import("@smithy/node-http-handler");
    return { name, NodeHttpHandler: mod.NodeHttpHandler as unknown as HandlerClass };
  }
  let mod: typeof import("@sockeye/node-http-handler");
  try {
    mod = await import("@sockeye/node-http-handler");
  } catch (error) {
    throw new Error(
      "aws-sdk-integ: cannot import @sockeye/node-http-handler. Build it first: " +
        "npx turbo run build --filter=@sockeye/node-http-handler",
      { cause: error }
    );
  }
  // Guard against testing the wrong class under Sockeye's name (e.g. a re-export of upstream).
  if (typeof mod.NodeHttpHandler.prototype.getPoolStats !== "function") {
    throw new Error("aws-sdk-integ: @sockeye/node-http-handler's NodeHttpHandler has no getPoolStats(): not Sockeye?");
  }
  return { name, NodeHttpHandler: mod.NodeHttpHandler as unknown as HandlerClass };
}

/** The implementations selected for this run, Sockeye first. @internal */
export const HANDLERS_UNDER_TEST: readonly HandlerUnderTest[] = await Promise.all(selectedNames().map(load));
