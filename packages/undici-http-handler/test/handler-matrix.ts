/**
 * The four handlers the cross-handler suites compare, built from one handler-neutral configuration:
 *
 * | key              | implementation                                   |
 * |------------------|--------------------------------------------------|
 * | `sockeye-node`   | Sockeye `NodeHttpHandler`                        |
 * | `sockeye-undici` | Sockeye `UndiciHttpHandler`                      |
 * | `smithy-node`    | upstream `@smithy/node-http-handler` 4.14.2      |
 * | `smithy-undici`  | upstream `@smithy/undici-http-handler` 3.2.4     |
 *
 * The classes are passed in (`HandlerClasses`), so a suite picks where Sockeye's come from (`src/` in the `integ`
 * project, the built packages in the `aws` project). The translation of the neutral settings to each handler's
 * options lives here once:
 * - `maxSockets`, `ca`: Node agents' options; `@smithy/undici-http-handler`'s `dispatcher` `connections` /
 *   `connect.ca`.
 * - `requestTimeout` (a rejection, `throwOnRequestTimeout: true` on the Node handlers): `@smithy/undici-http-handler`
 *   reads it per call only (`handle(request, { requestTimeout })`), so {@link perCallOptions} adds it there.
 * - `connectionTimeout`: undici's `connect.timeout` for `@smithy/undici-http-handler`.
 * - `socketTimeout`: undici's `headersTimeout` and `bodyTimeout` for `@smithy/undici-http-handler`.
 * - Sockeye-only settings (`socketAcquisitionTimeout`, `saturation`, callbacks) are passed to Sockeye's handlers
 *   only; `logger` to the three that take one.
 */
import type { Logger } from "@smithy/types";
import type { SaturationOptions, SaturationReport } from "@sockeye/pool-monitor";

/** The handlers compared by the suites. */
export type HandlerKey = "sockeye-node" | "sockeye-undici" | "smithy-node" | "smithy-undici";

/** Every key, Sockeye's first. */
export const HANDLER_KEYS: readonly HandlerKey[] = ["sockeye-node", "sockeye-undici", "smithy-node", "smithy-undici"];

/** What the suites need of a handler instance (structural: all four fit). */
export interface AnyHandler {
  handle(request: any, options?: any): Promise<{ response: any }>;
  destroy(): void;
  updateHttpClientConfig(key: any, value: any): void;
  httpHandlerConfigs(): object;
}

/** The four constructors. */
export type HandlerClasses = Record<HandlerKey, new (options?: any) => AnyHandler>;

/** Handler-neutral settings (milliseconds for every duration; unset = the handler's default). */
export interface NeutralConfig {
  /** Connections per origin. */
  maxSockets?: number;
  /** CA for the https fixture. */
  ca?: Buffer;
  /** handle() until response headers, as a rejection. */
  requestTimeout?: number;
  connectionTimeout?: number;
  socketTimeout?: number;
  /** Sockeye only. */
  socketAcquisitionTimeout?: number;
  /** Sockeye only. */
  saturation?: SaturationOptions;
  /** Sockeye only. */
  onSaturation?: (report: SaturationReport) => void;
  /** Not `@smithy/undici-http-handler` (it has no logger). */
  logger?: Logger;
  /** `requestTimeout` only warns (Node handlers; `@smithy/undici-http-handler` then gets no timeout). */
  warnOnlyRequestTimeout?: boolean;
}

/** Whether `key` is one of Sockeye's handlers. */
export function isSockeye(key: HandlerKey): boolean {
  return key === "sockeye-node" || key === "sockeye-undici";
}

/** The handler's constructor options for `config`. */
export function optionsFor(key: HandlerKey, config: NeutralConfig): Record<string, unknown> {
  const agent = {
    ...(config.maxSockets === undefined ? {} : { maxSockets: config.maxSockets }),
    ...(config.ca === undefined ? {} : { ca: config.ca }),
  };
  if (key === "smithy-undici") {
    return {
      dispatcher: {
        ...(config.maxSockets === undefined ? {} : { connections: config.maxSockets }),
        connect: {
          ...(config.ca === undefined ? {} : { ca: config.ca }),
          ...(config.connectionTimeout === undefined ? {} : { timeout: config.connectionTimeout }),
        },
        ...(config.socketTimeout === undefined
          ? {}
          : { headersTimeout: config.socketTimeout, bodyTimeout: config.socketTimeout }),
      },
    };
  }
  const options: Record<string, unknown> = {
    httpAgent: { maxSockets: config.maxSockets ?? 50 },
    httpsAgent: { maxSockets: 50, ...agent },
  };
  if (config.requestTimeout !== undefined) {
    options.requestTimeout = config.requestTimeout;
    options.throwOnRequestTimeout = config.warnOnlyRequestTimeout !== true;
  }
  if (config.connectionTimeout !== undefined) options.connectionTimeout = config.connectionTimeout;
  if (config.socketTimeout !== undefined) options.socketTimeout = config.socketTimeout;
  if (config.logger !== undefined) options.logger = config.logger;
  if (isSockeye(key)) {
    if (config.socketAcquisitionTimeout !== undefined) {
      options.socketAcquisitionTimeout = config.socketAcquisitionTimeout;
    }
    if (config.saturation !== undefined) options.saturation = config.saturation;
    if (config.onSaturation !== undefined) options.onSaturation = config.onSaturation;
  }
  return options;
}

/** Options for each `handle()` call: `@smithy/undici-http-handler` takes its (throwing) `requestTimeout` here. */
export function perCallOptions(key: HandlerKey, config: NeutralConfig): Record<string, unknown> {
  if (key === "smithy-undici" && config.requestTimeout !== undefined && config.warnOnlyRequestTimeout !== true) {
    return { requestTimeout: config.requestTimeout };
  }
  return {};
}

/** Builds `key`'s handler for `config`. */
export function createHandler(classes: HandlerClasses, key: HandlerKey, config: NeutralConfig = {}): AnyHandler {
  return new classes[key](optionsFor(key, config));
}
