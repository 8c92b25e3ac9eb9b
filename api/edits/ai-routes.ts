import { defineRoutes } from '../route';
import { idempotencyKeyOf, tenantOf, validBody, type AppContext } from '../context';
import { AppError } from '../../shared/errors/catalog';
import { flowSelectionSchema } from '../../shared/flows/definition';
import { aiFieldProblems } from '../../shared/edits/inputs';
import { fieldSchemaAt, resolveField } from '../../shared/flows/fields';
import { budgetOf } from '../../shared/edits/run-of';
import { selectionFilter, type AiSpec, type EditJobInput, type EditSelection } from '../../shared/edits/runs';
import { aiCallTokens } from '../../shared/edits/engines';
import { products } from '../../shared/products/collections';
import { leastCallTokens } from '../../shared/ai/transform-one';
import type { JsonSchema } from '../../shared/validation';
import { answerRun, editRuns, editTags, readScope, runJobRoutes, updateScope } from './runs';

const tags = editTags;
const read = readScope;
const update = updateScope;
const JOBS = '/products/bulk/ai';

/** The longest prompt a transform takes. */
export const MAX_PROMPT_LENGTH = 4000;
const fieldList = (max: number, description: string): JsonSchema => ({
  type: 'array',
  minItems: 1,
  maxItems: max,
  items: { type: 'string', minLength: 1, maxLength: 200 },
  description,
});

const transformSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    prompt: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_PROMPT_LENGTH,
      pattern: '\\S',
      description: "the merchant's instruction, in any language",
    },
    selection: flowSelectionSchema,
    fields: fieldList(
      20,
      'the fields the model may change (required): leaf paths such as title.value, description.value, seo.metaTitle, tags, bullets, brand; price and status only when listed',
    ),
    sourceFields: {
      ...fieldList(
        30,
        'fields the model may read besides those it changes (default: sku, title, description, brand, model, kind, category, tags, attributes)',
      ),
      minItems: 0,
    },
    mode: {
      type: 'string',
      enum: ['preview', 'apply'],
      default: 'apply',
      description: 'preview plans without writing; with previewId, apply only (the default)',
    },
    previewId: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description: 'apply a completed preview: its answers are written without asking the model again',
    },
    operationName: { type: 'string', maxLength: 200 },
  },
  // a previewId applies that preview: a request asking for a preview with it contradicts itself
  if: { required: ['previewId'] },
  then: { properties: { mode: { const: 'apply' } } },
};

interface TransformBody {
  prompt?: string;
  selection?: EditSelection;
  fields?: string[];
  sourceFields?: string[];
  mode: 'preview' | 'apply';
  previewId?: string;
  operationName?: string;
}

function requireProvider(ctx: AppContext): void {
  if (!ctx.deps.config.ai)
    throw new AppError(
      503,
      'ai-not-configured',
      'AI transforms need an OpenAI-compatible chat-completions provider: set AI_BASE_URL (e.g. https://api.openai.com/v1 or http://localhost:11434/v1 for Ollama), AI_API_KEY and AI_MODEL, then restart the API and the worker',
    );
}

/**
 * 429 before anything starts when today's budget cannot pay for one more call: the least any
 * product's call costs or, for a run small enough to be answered at once, the least the call of
 * any product it selects costs (a budget that pays for none would only fail each of them).
 */
async function requireBudget(ctx: AppContext, spec: AiSpec, input: EditJobInput): Promise<void> {
  const { tenantDb, principal } = tenantOf(ctx);
  const tenant = await ctx.deps.tenancy.getTenant(principal.tenantId);
  const status = await budgetOf(ctx.deps.config, tenantDb, tenant).status();
  const maxOutput = ctx.deps.config.ai?.maxOutputTokens ?? 0;
  const fields = spec.fields.map((path) => ({ path, schema: fieldSchemaAt(path)! }));
  let oneCall = leastCallTokens(spec.prompt, fields, maxOutput);
  if (status.remaining >= oneCall && input.total !== null && input.total > 0) {
    const selected = await tenantDb.collection(products).find(selectionFilter(input)).limit(input.total).toArray();
    if (selected.length) oneCall = Math.min(...selected.map((p) => aiCallTokens(spec, p, maxOutput)));
  }
  if (status.remaining >= oneCall) return;
  const seconds = Math.max(1, Math.ceil((Date.parse(status.resetsAt) - Date.now()) / 1000));
  throw new AppError(
    429,
    'budget-exceeded',
    `The daily AI token budget is used up (${status.used + status.reserved} of ${status.dailyLimit} tokens); it resets at ${status.resetsAt}`,
    { error: 'BUDGET_EXCEEDED', retryable: true, details: status },
    { 'Retry-After': String(seconds) },
  );
}

const RESULT_NOTES = [
  'Each product is one model call: the prompt and, as separate data (never instructions), the current values of `fields` and the `sourceFields`.',
  "The answer is constrained by a JSON schema to the allowed fields, then validated by the product rules. Per-product errors carry the spec's AI codes and `retryable`:",
  'RATE_LIMITED, BUDGET_EXCEEDED, INVALID_PROMPT, MODEL_ERROR, PARSE_ERROR (after one repair attempt), TIMEOUT, INVALID_RESPONSE (off-schema, or refused by the product rules: validation-error).',
  'Runs of up to AI_SYNC_MAX products (default 10) answer when done: 200, or 207 with `errors`; larger ones 202 `{jobId: "aitx_…"}`, polled at GET /products/bulk/ai/{jobId}.',
  "When the tenant's daily token budget runs out mid-run the run ends `partial`: what was done stays applied and recorded; the rest is listed as BUDGET_EXCEEDED.",
  'mode preview plans without writing and answers a previewId; an apply with that previewId (mode apply, the default: mode preview with it is 400 validation-error) writes the previewed answers without new model calls (products changed since are asked again and listed in `replanned`). A prompt, selection or fields sent with it must be the previewed ones: 409 preview-mismatch otherwise.',
  'An apply that changes products is one bulk operation (type `ai-transform`), reversible with POST /products/bulk/operations/{id}/rollback. 429 budget-exceeded (`error: BUDGET_EXCEEDED`, Retry-After) when the budget cannot pay for one call; 503 ai-not-configured without a provider.',
].join('\n');

export const aiRoutes = defineRoutes([
  {
    method: 'get',
    path: '/products/bulk/ai/budget',
    summary: "The tenant's daily AI token budget: `{dailyLimit, used, reserved, remaining, resetsAt}`",
    description:
      'A day is the tenant\'s own (settings.timeZone); `reserved` is held by calls in flight (prompt plus the most a call may generate), replaced by the actual usage when each answers. Permission (the spec says "not stated"): products:read.',
    tags,
    auth: read,
    responses: { 200: { description: '`{dailyLimit, used, reserved, remaining, resetsAt}`' } },
    handler: async (ctx) => {
      const { tenantDb, principal } = tenantOf(ctx);
      const tenant = await ctx.deps.tenancy.getTenant(principal.tenantId);
      ctx.body = await budgetOf(ctx.deps.config, tenantDb, tenant).status();
    },
  },
  {
    method: 'get',
    path: '/products/bulk/ai/usage',
    summary: 'Tokens used per day: `{history: [{date, tokensUsed, requestCount}]}`, newest first',
    tags,
    auth: read,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: { days: { type: 'integer', minimum: 1, maximum: 366, default: 30 } },
    },
    responses: { 200: { description: '`{history: [{date, tokensUsed, requestCount}]}`' } },
    handler: async (ctx) => {
      const { tenantDb, principal } = tenantOf(ctx);
      const tenant = await ctx.deps.tenancy.getTenant(principal.tenantId);
      const { days } = ctx.state.query as { days: number };
      ctx.body = await budgetOf(ctx.deps.config, tenantDb, tenant).usage(days);
    },
  },
  {
    method: 'post',
    path: '/products/bulk/ai/transform',
    idempotency: 'bound',
    summary: 'Edits the selected products with a natural-language prompt through an OpenAI-compatible model',
    description: RESULT_NOTES,
    tags,
    auth: update,
    body: transformSchema,
    invalid: {
      rules: [
        // like every AI code, it says whether the same request may succeed later
        { field: 'prompt', code: 'INVALID_PROMPT', extra: { retryable: false } },
        {
          field: 'mode',
          keyword: 'const',
          code: 'validation-error',
          message:
            'mode preview cannot be sent with a previewId, which applies that preview: send mode apply (or none) to apply it, or the edit without the previewId to preview it again',
        },
      ],
    },
    responses: {
      200: { description: 'done' },
      207: { description: 'done; `errors` lists the products not changed, each with its AI code and `retryable`' },
      202: { description: 'a large run, as a job' },
      400: {
        description:
          'validation-error (among others: mode preview with a previewId); INVALID_PROMPT (an empty or too long prompt)',
      },
      404: { description: 'not-found: no such preview' },
      409: { description: 'preview-mismatch (an edit other than the previewed one), preview-not-ready' },
      410: { description: 'preview-expired' },
      429: { description: 'budget-exceeded' },
      503: { description: 'ai-not-configured' },
    },
    handler: async (ctx) => {
      requireProvider(ctx);
      const body = validBody<TransformBody>(ctx);
      let ai: AiSpec | undefined;
      if (body.prompt !== undefined || body.fields !== undefined || body.selection !== undefined || !body.previewId) {
        const missing = (['prompt', 'selection', 'fields'] as const).filter((k) => body[k] === undefined);
        if (missing.length)
          throw new AppError(
            400,
            'validation-error',
            `Missing ${missing.join(', ')} (or send the previewId of a completed preview alone)`,
            {
              field: missing[0],
            },
          );
        const problems = [
          ...aiFieldProblems(body.fields!, 'fields'),
          ...aiFieldProblems(body.sourceFields ?? [], 'sourceFields', { reading: true }),
        ];
        if (problems.length)
          throw new AppError(
            400,
            'validation-error',
            `Invalid transform: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
            {
              field: problems[0].path,
              errors: problems,
            },
          );
        // as the fields resolve (`title` is `title.value`), so a preview and its apply compare alike
        const canonical = (paths: string[]) => paths.map((p) => resolveField(p)!.path);
        ai = {
          prompt: body.prompt!,
          fields: canonical(body.fields!),
          ...(body.sourceFields?.length ? { sourceFields: canonical(body.sourceFields) } : {}),
        };
      }
      const run = await editRuns(ctx, 'ai-transform').start({
        // checked only for a run that starts now: a retry under its Idempotency-Key answers its job,
        // and an apply of a preview asks the model only for products changed since (each of those
        // is refused on its own)
        beforeStart: ai && !body.previewId ? (input) => requireBudget(ctx, ai, input) : undefined,
        type: 'ai-transform',
        mode: body.mode, // apply whenever previewId is sent (the schema refuses preview with it)
        ai,
        selection: body.selection,
        previewId: body.previewId,
        operationName: body.operationName ?? null,
        idempotencyKey: idempotencyKeyOf(ctx),
      });
      answerRun(ctx, JOBS, run);
    },
  },
  ...runJobRoutes('ai-transform', JOBS, {
    read: 'An AI transform run: live progress while it runs, the result once it ended',
    cancel: 'Cancels a running AI transform: it stops before its next page; what it changed stays recorded',
    started: 'transform',
  }),
]);
