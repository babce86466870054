/**
 * SQS (the JSON protocol SDK 3.1169 speaks) through each handler under test, against moto: create a queue, send,
 * receive (the SDK verifies the body's MD5), delete, and see the queue empty.
 */
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqsClient, uniqueName } from "./support/aws-clients.js";
import { HANDLERS_UNDER_TEST } from "./support/handlers-under-test.js";
import { sha256 } from "./support/sha256.js";
import { failOnUnhandledRejections } from "./support/unhandled-rejections.js";

failOnUnhandledRejections();

describe.each(HANDLERS_UNDER_TEST)("SQS through the $name NodeHttpHandler", ({ NodeHttpHandler }) => {
  let client: SQSClient;
  let QueueUrl: string;

  beforeAll(async () => {
    client = sqsClient(new NodeHttpHandler({}));
    const created = await client.send(new CreateQueueCommand({ QueueName: uniqueName("sockeye-sqs") }));
    expect(created.QueueUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\d+\/sockeye-sqs-/);
    QueueUrl = created.QueueUrl!;
  });

  afterAll(() => {
    client?.destroy();
  });

  it("SendMessage, ReceiveMessage and DeleteMessage round-trip one message", async () => {
    const MessageBody = `hello from Sockeye ✓ ${"y".repeat(2000)}`;
    const sent = await client.send(
      new SendMessageCommand({
        QueueUrl,
        MessageBody,
        MessageAttributes: { origin: { DataType: "String", StringValue: "aws-sdk-integ" } },
      })
    );
    expect(sent.$metadata.httpStatusCode).toBe(200);
    expect(sent.MessageId).toMatch(/\S/);

    const received = await client.send(
      new ReceiveMessageCommand({
        QueueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ["All"],
      })
    );
    expect(received.Messages).toHaveLength(1);
    const [message] = received.Messages!;
    expect(message!.MessageId).toBe(sent.MessageId);
    expect(sha256(message!.Body!)).toBe(sha256(MessageBody));
    expect(message!.MessageAttributes?.origin?.StringValue).toBe("aws-sdk-integ");

    const deleted = await client.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: message!.ReceiptHandle! }));
    expect(deleted.$metadata.httpStatusCode).toBe(200);

    const attributes = await client.send(
      new GetQueueAttributesCommand({
        QueueUrl,
        AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
      })
    );
    expect(attributes.Attributes).toEqual({
      ApproximateNumberOfMessages: "0",
      ApproximateNumberOfMessagesNotVisible: "0",
    });
  });
});
