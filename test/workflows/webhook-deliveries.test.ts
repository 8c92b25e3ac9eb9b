import { deliverSignal, endpointDeliveries, type EndpointDeliveryInput } from '../../shared/webhooks/messages';
import { openWorkflowEnv, testContext, type WorkflowEnv } from './support/env';
import { scenario, TENANT } from './support/scenarios';

/**
 * An endpoint's delivery workflow over fake attempts: failures are retried on the (scaled)
 * schedule, a round's last failure marks the delivery failed, a stopped endpoint fails everything
 * held, and the workflow ends when idle.
 */
let wf: WorkflowEnv;
beforeAll(async () => {
  wf = await openWorkflowEnv({ name: 'webhook-deliveries' });
});
afterAll(() => wf?.close());

const endpointOf = (workflowId: string) => workflowId.slice(`${TENANT}/`.length);
const attempts = (deliveryId: string) => wf.world.stepsOf(deliveryId).filter((a) => a === 'attemptWebhookDelivery');

test('a failing delivery is retried until it succeeds; another is not held up; the workflow ends idle', async () => {
  const run = await scenario(endpointDeliveries, 'retried-then-delivered').run(testContext(wf));
  expect(run.error).toBeUndefined();
  const id = endpointOf(run.workflowId);
  expect(attempts(`${id}:msg_1`)).toHaveLength(3);
  expect(attempts(`${id}:msg_2`)).toHaveLength(1);
  expect(wf.world.stepsOf(`${id}:msg_1`)).not.toContain('failWebhookDeliveries');
});

test('ten failed attempts end the round: the delivery is marked failed', async () => {
  const run = await scenario(endpointDeliveries, 'out-of-attempts').run(testContext(wf));
  const id = endpointOf(run.workflowId);
  expect(attempts(`${id}:msg_1`)).toHaveLength(10);
  expect(wf.world.stepsOf(`${id}:msg_1`).at(-1)).toBe('failWebhookDeliveries');
});

test('a stopped endpoint fails everything it holds and the workflow ends', async () => {
  const run = await scenario(endpointDeliveries, 'endpoint-stopped').run(testContext(wf));
  const id = endpointOf(run.workflowId);
  expect(run.error).toBeUndefined();
  expect(attempts(`${id}:msg_1`)).toHaveLength(1);
  // msg_2 was never attempted, and is failed with msg_1 (recover sends them again)
  expect(attempts(`${id}:msg_2`)).toHaveLength(0);
  expect(wf.world.stepsOf(`${id}:msg_2`)).toEqual(['failWebhookDeliveries']);
});

test('a resend that arrives during an attempt is attempted after it', async () => {
  const run = await scenario(endpointDeliveries, 'resent-during-attempt').run(testContext(wf));
  const id = endpointOf(run.workflowId);
  expect(run.error).toBeUndefined();
  expect(attempts(`${id}:msg_1`)).toHaveLength(2);
});

test('a resend that arrives while its round is marked failed is still attempted', async () => {
  const ctx = testContext(wf);
  const id = ctx.id('webhooks_we-fail-resend');
  const d = `${id}:msg_1`;
  ctx.world.script(d, { attempts: Array.from({ length: 10 }, () => ({ kind: 'retry' as const })) });
  const gate = ctx.world.gate(d, 'failWebhookDeliveries');
  const input: EndpointDeliveryInput = { tenantId: TENANT, endpointId: id, retryScale: 0.00001, idleMs: 200 };
  const handle = await ctx.client.workflow.signalWithStart(endpointDeliveries.name, {
    taskQueue: ctx.taskQueue,
    workflowId: `${TENANT}/${id}`,
    args: [input],
    signal: deliverSignal,
    signalArgs: [[{ deliveryId: d, round: 0 }]],
  });
  await gate.reached;
  // POST /webhooks/{id}/deliveries/{d}/resend while round 0 is being marked failed: round 1
  await handle.signal(deliverSignal, [{ deliveryId: d, round: 1 }]);
  gate.release();
  await handle.result();
  expect(attempts(d)).toHaveLength(11);
});

test('a recover that reaches a stopped endpoint while its deliveries are failed is still attempted', async () => {
  const ctx = testContext(wf);
  const id = ctx.id('webhooks_we-stop-recover');
  const d = `${id}:msg_1`;
  // the endpoint was disabled at the first attempt, and is enabled again by the time of the second
  ctx.world.script(d, { attempts: [{ kind: 'stopped' as const }, { kind: 'done' as const }] });
  const gate = ctx.world.gate(d, 'failWebhookDeliveries');
  const input: EndpointDeliveryInput = { tenantId: TENANT, endpointId: id, retryScale: 0.00001, idleMs: 200 };
  const handle = await ctx.client.workflow.signalWithStart(endpointDeliveries.name, {
    taskQueue: ctx.taskQueue,
    workflowId: `${TENANT}/${id}`,
    args: [input],
    signal: deliverSignal,
    signalArgs: [[{ deliveryId: d, round: 0 }]],
  });
  await gate.reached;
  // PATCH {"status":"enabled"} then POST /webhooks/{id}/recover, while this run fails round 0
  await handle.signal(deliverSignal, [{ deliveryId: d, round: 1 }]);
  gate.release();
  await handle.result();
  expect(attempts(d)).toHaveLength(2);
  // only round 0 was failed: round 1, which the recover raised, stays for its attempt
  expect(wf.world.callsOf(d).find((c) => c.activity === 'failWebhookDeliveries')?.input).toMatchObject({
    rounds: { [d]: 0 },
  });
});
