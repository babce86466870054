/**
 * Factories for the real AWS SDK v3 clients used by the suite: fake static credentials, us-east-1, and an
 * explicit endpoint (moto's, injected by the globalSetup, or any local server). The `requestHandler` is always the
 * caller's: the point of the suite is what that handler does under a real client.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import { SQSClient } from "@aws-sdk/client-sqs";
import { inject } from "vitest";
import type { HandlerInstance } from "./handlers-under-test.js";

/** Settings shared by all clients built here. @internal */
export interface ClientSettings {
  /** Defaults to the moto endpoint. */
  endpoint?: string;
  /** Defaults to the SDK default (3). */
  maxAttempts?: number;
  /** A client logger (the SDK offers it to the handler via `updateHttpClientConfig(Symbol.for("logger"), …)`). */
  logger?: {
    debug(...a: unknown[]): void;
    info(...a: unknown[]): void;
    warn(...a: unknown[]): void;
    error(...a: unknown[]): void;
  };
}

/** moto's base URL, e.g. `http://127.0.0.1:40123`. @internal */
export function motoEndpoint(): string {
  return inject("motoEndpoint");
}

function common(requestHandler: HandlerInstance, settings: ClientSettings) {
  return {
    region: "us-east-1",
    endpoint: settings.endpoint ?? motoEndpoint(),
    credentials: { accessKeyId: "AKIDSOCKEYETEST", secretAccessKey: "sockeye-test-secret" },
    requestHandler,
    ...(settings.maxAttempts === undefined ? {} : { maxAttempts: settings.maxAttempts }),
    ...(settings.logger === undefined ? {} : { logger: settings.logger }),
  };
}

/** An S3 client with path-style addressing (moto serves buckets under its own host). @internal */
export function s3Client(requestHandler: HandlerInstance, settings: ClientSettings = {}): S3Client {
  return new S3Client({ ...common(requestHandler, settings), forcePathStyle: true });
}

/** @internal */
export function dynamoDbClient(requestHandler: HandlerInstance, settings: ClientSettings = {}): DynamoDBClient {
  return new DynamoDBClient(common(requestHandler, settings));
}

/** An SQS client (the JSON protocol, as SDK 3.1169 speaks it). @internal */
export function sqsClient(requestHandler: HandlerInstance, settings: ClientSettings = {}): SQSClient {
  return new SQSClient(common(requestHandler, settings));
}

/** A name unique to this run, for buckets, tables and queues (lower-case, S3-safe). @internal */
export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
