import type { ProductDoc } from '../products/types';
import type { ChatClient } from '../ai/provider';
import type { TokenBudget } from '../ai/budget';
import { leastCallTokens, transformOne } from '../ai/transform-one';
import { newId } from '../ids';
import { fieldSchemaAt, readField, writeField } from '../flows/fields';
import { isFlowRunFailure, runFlow } from '../flows/run';
import type { FlowDefinition } from '../flows/definition';
import { contentOf } from '../products/content';
import type { Planner, Proposal } from './plan';
import type { AiSpec } from './runs';

/** What a flow's conditions may read besides the content: the server's fields (flows/fields.ts SERVER_FIELDS; never written: flowErrors refuses them). */
const SERVER_VIEW = ['_id', 'id', 'tenantId', 'version', 'createdAt', 'updatedAt'];

/** A rule flow's planner: the rules run over the product's content, pure and the same every time. */
export function flowPlanner(flow: FlowDefinition): Planner {
  return {
    async propose(current: ProductDoc): Promise<Proposal> {
      const view = {
        ...contentOf(current),
        _id: current._id.toHexString(),
        id: current._id.toHexString(),
        tenantId: current.tenantId,
        version: current.version,
        createdAt: current.createdAt.toISOString(),
        updatedAt: current.updatedAt.toISOString(),
      };
      const ran = runFlow(flow, view);
      if (isFlowRunFailure(ran))
        return { kind: 'invalid', message: `The flow cannot run on this product: ${ran.error}`, fieldErrors: [] };
      for (const k of SERVER_VIEW) delete ran.product[k];
      return { kind: 'proposed', product: ran.product };
    },
  };
}

/** What the model reads of a product when the transform names no source fields. */
export const DEFAULT_SOURCE_FIELDS = [
  'sku',
  'title.value',
  'description.value',
  'brand',
  'model',
  'productKind',
  'category.name',
  'tags',
  'attributes',
];

/**
 * An AI transform's planner: one model call per product (its tokens reserved from the tenant's
 * budget first), the answer constrained to the allowed fields and written into them; the product
 * rules then judge it like any write. A rate-limited call waits as the provider asks (up to a
 * bound) and is tried once more.
 */
export function aiPlanner(args: { client: ChatClient; budget: TokenBudget; spec: AiSpec; runId: string }): Planner {
  const fields = aiFields(args.spec);
  return {
    async propose(current: ProductDoc): Promise<Proposal> {
      const content = structuredClone(contentOf(current));
      const { source, current: now } = aiData(args.spec, content);
      for (let attempt = 0; ; attempt++) {
        const r = await transformOne({
          client: args.client,
          budget: args.budget,
          reservationId: newId('rsv'),
          prompt: args.spec.prompt,
          fields,
          source,
          current: now,
        });
        if (r.ok) {
          for (const [path, value] of Object.entries(r.values)) writeField(content, path, value);
          return { kind: 'proposed', product: content };
        }
        const wait = r.code === 'RATE_LIMITED' && r.retryable ? (r.retryAfterMs ?? 1000) : null;
        if (wait === null || wait > MAX_RATE_LIMIT_WAIT_MS || attempt >= 1)
          return { kind: 'failed', code: r.code, message: r.message, retryable: r.retryable };
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    },
  };
}

const aiFields = (spec: AiSpec) => spec.fields.map((path) => ({ path, schema: fieldSchemaAt(path)! }));

/** What the model is shown of a product: the source fields it reads and the current values of those it writes. */
function aiData(spec: AiSpec, content: ReturnType<typeof contentOf>) {
  const sources = spec.sourceFields?.length ? spec.sourceFields : DEFAULT_SOURCE_FIELDS;
  return {
    source: Object.fromEntries(sources.map((p) => [p, readField(content, p) ?? null])),
    current: Object.fromEntries(spec.fields.map((p) => [p, readField(content, p) ?? null])),
  };
}

/** What the first call for a product reserves from the budget. */
export function aiCallTokens(spec: AiSpec, product: ProductDoc, maxOutputTokens: number): number {
  return leastCallTokens(spec.prompt, aiFields(spec), maxOutputTokens, aiData(spec, contentOf(product)));
}

/** The longest a rate-limited call waits before its one more try; a longer Retry-After is the product's RATE_LIMITED. */
const MAX_RATE_LIMIT_WAIT_MS = 10_000;
