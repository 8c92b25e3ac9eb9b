import { defineRoutes } from '../route';
import { idempotencyKeyOf, validBody } from '../context';
import { AppError } from '../../shared/errors/catalog';
import { flowSchema, type FlowDefinition } from '../../shared/flows/definition';
import { flowProblems, requireValidFlow } from '../../shared/edits/inputs';
import type { JsonSchema } from '../../shared/validation';
import { answerRun, editRuns, editTags, readScope, runJobRoutes, updateScope } from './runs';

const tags = editTags;
const read = readScope;
const update = updateScope;
const JOBS = '/products/bulk/flow';

const flowProps = flowSchema.properties as Record<string, JsonSchema>;
const operationName: JsonSchema = {
  type: 'string',
  maxLength: 200,
  description: 'label in the bulk operations history',
};
const previewId: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  description:
    'a completed preview (its jobId): writes exactly the previewed changes; products changed since are planned again and listed in `replanned`',
};
/** Execute takes a flow, or a preview's id (with or without the same flow). */
const executeSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { ...flowProps, previewId, operationName },
};

const FLOW_NOTES = [
  'A flow is `{name?, selection, rules[]}`. selection: `{skus[]}` (a variant SKU selects its product), `{filters}` (the list filters of GET /products) or `{all: true}`.',
  'A rule is `{name?, when?, actions[]}`; rules run in order, each on the product as the rules before it left it. `when` is a condition tree:',
  '`{all: [...]}` / `{any: [...]}` nesting `{field, operator, value?, caseSensitive?}`. Operators: equals, not_equals, in, not_in, contains, starts_with,',
  'ends_with, empty, not_empty, greater, less, between ([min, max]). A condition on a variant field (`variants.price`) holds when any variant satisfies it.',
  'Actions: set {field, value}, clear {field}, add/remove {field, values[]} (lists such as tags, bullets), copy {field, from},',
  'concatenate {field, parts[{field}|{text}], separator?}, replace {field, find, replace, caseSensitive?} (plain text, every occurrence),',
  'calculate {field, from?, operation multiply|divide|add|subtract, operand (number or {field}), round? {step}|{ending}|{decimals}}.',
  "Fields: any stored product field and nested path (`title.value`, `seo.metaTitle`), `metafields.<namespace>.<key>`, and every variant's fields (`variants.price`; an action on one applies to every variant).",
  'SKUs, ids, bindings and timestamps are read-only. Each changed product is validated by the rules of a product write; a product the flow would make invalid is not written and is listed with the reason.',
].join('\n');

const RUN_NOTES = [
  'Runs of up to FLOW_SYNC_MAX products (default 200) answer when done: 200, or 207 when some products could not be changed (`errors[{sku, productId, code, message, fieldErrors?}]`).',
  'Larger ones answer 202 `{jobId: "flow_…", status}` at once; poll GET /products/bulk/flow/{jobId}. Every run is a workflow, and a repeated request with the same Idempotency-Key answers the same run.',
  'The answer: `{jobId, type, mode, status, total, processed, percent, counts{matched, changed, unchanged, invalid, failed}, operationId, previewId, errors[], errorsNotListed, fields[{field, changed, samples[{sku, before, after}]}], replanned[]}`.',
  'An apply that changes products records them as one bulk operation (type `flow`, `operationId`), reversible with POST /products/bulk/operations/{id}/rollback; one that changes nothing records none (operationId null).',
].join('\n');

export const flowRoutes = defineRoutes([
  {
    method: 'post',
    path: '/products/bulk/flow/validate',
    summary: 'Checks a rule flow without running it: `{valid, errors[{path, message}]}`',
    description: `${FLOW_NOTES}\n\nAlways 200 for a JSON object; every problem is listed (shape, unknown or read-only fields, operators and values that do not fit the field). Permission: products:read (it reads nothing and changes nothing).`,
    tags,
    auth: read,
    body: { type: 'object', description: 'a flow' },
    responses: { 200: { description: '`{valid, errors[{path, message}]}`' } },
    handler: (ctx) => {
      const errors = flowProblems(ctx.request.body);
      ctx.body = { valid: errors.length === 0, errors };
    },
  },
  {
    method: 'post',
    path: '/products/bulk/flow/preview',
    idempotency: 'bound',
    summary: 'Dry run of a rule flow: what it would change, product by product, without writing (answers a previewId)',
    description: `${FLOW_NOTES}\n\nThe preview plans every selected product with the very code of an apply and keeps the plans for 24 hours under its previewId (its jobId): counts (matched, changed = would change, unchanged, invalid, failed), the changes per field with a few before/after samples, and every product the flow would make invalid (\`errors\` with code validation-error and the reason). POST /products/bulk/flow/execute with \`{previewId}\` then writes exactly these changes.\n\n${RUN_NOTES}\n\nPermission: products:update (a preview is the first step of an edit).`,
    tags,
    auth: update,
    body: { ...flowSchema, properties: { ...flowProps, operationName } },
    responses: {
      200: { description: 'the preview, done' },
      202: { description: 'a large preview, running as a job' },
      400: { description: 'validation-error: `{code, message, errors[{path, message}]}`' },
    },
    handler: async (ctx) => {
      const { operationName: label, ...flow } = validBody<FlowDefinition & { operationName?: string }>(ctx);
      requireValidFlow(flow);
      const run = await editRuns(ctx, 'flow').start({
        type: 'flow',
        mode: 'preview',
        flow,
        selection: flow.selection,
        operationName: label ?? flow.name ?? null,
        idempotencyKey: idempotencyKeyOf(ctx),
      });
      answerRun(ctx, JOBS, run);
    },
  },
  {
    method: 'post',
    path: '/products/bulk/flow/execute',
    idempotency: 'bound',
    summary: 'Runs a rule flow over the selected products (or applies a preview by its previewId)',
    description: `${FLOW_NOTES}\n\n${RUN_NOTES}\n\nWith \`previewId\`: the previewed changes are written as planned; a product changed since the preview is planned again and listed in \`replanned\`. A flow sent with it must be the previewed one (409 preview-mismatch); 404 for an unknown preview, 409 preview-not-ready while it runs, 410 preview-expired after 24 hours.\n\nPermission (the spec says "not stated"): products:update.`,
    tags,
    auth: update,
    body: executeSchema,
    responses: {
      200: { description: 'done, every product as planned' },
      207: { description: 'done; `errors` lists the products that could not be changed' },
      202: { description: 'a large run, as a job' },
      400: { description: 'validation-error' },
      404: { description: 'not-found: no such preview' },
      409: { description: 'preview-mismatch, preview-not-ready' },
      410: { description: 'preview-expired' },
    },
    handler: async (ctx) => {
      const {
        previewId: fromPreview,
        operationName: label,
        ...rest
      } = validBody<Partial<FlowDefinition> & { previewId?: string; operationName?: string }>(ctx);
      const sent = Object.keys(rest).length > 0;
      if (!fromPreview && !sent)
        throw new AppError(
          400,
          'validation-error',
          'Send a flow (selection and rules) or the previewId of a completed preview',
          {
            field: 'rules',
          },
        );
      const flow = sent ? requireValidFlow(rest) : undefined;
      const run = await editRuns(ctx, 'flow').start({
        type: 'flow',
        mode: 'apply',
        flow,
        selection: flow?.selection,
        previewId: fromPreview,
        operationName: label ?? flow?.name ?? null,
        idempotencyKey: idempotencyKeyOf(ctx),
      });
      answerRun(ctx, JOBS, run);
    },
  },
  ...runJobRoutes('flow', JOBS, {
    read: 'A rule flow run (preview or apply): live progress while it runs, the result once it ended',
    cancel: 'Cancels a running flow: it stops before its next page; what it changed stays recorded and reversible',
    started: 'execute',
  }),
]);
