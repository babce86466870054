/**
 * The four handlers of `packages/undici-http-handler/test/handler-matrix.ts`, from their built packages (as an
 * application imports them): Sockeye's `NodeHttpHandler` and `UndiciHttpHandler`, `@smithy/node-http-handler` and
 * `@smithy/undici-http-handler`.
 */
import { NodeHttpHandler as SmithyNodeHttpHandler } from "@smithy/node-http-handler";
import { UndiciHttpHandler as SmithyUndiciHttpHandler } from "@smithy/undici-http-handler";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import { UndiciHttpHandler } from "@sockeye/undici-http-handler";
import type { HandlerClasses } from "../../../undici-http-handler/test/handler-matrix.js";

/** @internal */
export const DIST_HANDLER_CLASSES = {
  "sockeye-node": NodeHttpHandler,
  "sockeye-undici": UndiciHttpHandler,
  "smithy-node": SmithyNodeHttpHandler,
  "smithy-undici": SmithyUndiciHttpHandler,
} as unknown as HandlerClasses;
