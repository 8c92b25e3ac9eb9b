import type { InputErrors, InputRule } from '../route';
import type { JsonSchema } from '../../shared/validation';
import {
  fieldsToUpdateSchema,
  formatSchema,
  importConfigSchema,
  mappingsSchema,
  operationNameSchema,
} from '../../shared/csv/import-config';
import { FORMATS } from '../../shared/csv/layouts/index';
import { MAX_EXPORT_IDS, SYNC_MAX_BYTES, SYNC_MAX_ROWS } from '../../shared/csv/limits';
import { productFiltersSchema } from '../../shared/products/query';

/**
 * The CSV routes' bodies and the spec's codes for what they refuse. Every check on a request's
 * shape is here, in the schema the OpenAPI document shows; the handlers only translate HTTP.
 */

const UNSUPPORTED_FORMAT = `Unsupported format; use one of ${FORMATS.join(', ')}`;
const unsupportedFormat = (code: string): InputRule => ({
  field: 'format',
  keyword: 'enum',
  code,
  message: UNSUPPORTED_FORMAT,
});
/** Anything wrong inside an async import's config (not a config that is no object: a plain bad-request). */
const invalidConfig: InputRule = { field: 'config.*.**', code: 'bad-request/invalid-config' };
const unknownFieldsToUpdate: InputRule = {
  field: 'fieldsToUpdate.*',
  keyword: 'enum',
  code: 'bad-request/invalid-config',
  message: (f) => `${f.field} is not a product field an import can update`,
};

export const templateBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['format'],
  properties: { format: formatSchema },
};
// the spec's template answers an unknown format with its plain bad-request
export const templateInvalid: InputErrors = { code: 'bad-request', rules: [unsupportedFormat('bad-request')] };

const content: JsonSchema = {
  type: 'string',
  minLength: 1,
  description: `the CSV text (at most ${SYNC_MAX_BYTES} bytes and ${SYNC_MAX_ROWS} rows)`,
};

export const previewBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['content'],
  properties: {
    content,
    format: formatSchema,
    mappings: mappingsSchema,
    createIfNotExists: { type: 'boolean', default: false },
    fieldsToUpdate: fieldsToUpdateSchema,
  },
};
export const previewInvalid: InputErrors = {
  code: 'bad-request',
  rules: [unknownFieldsToUpdate, unsupportedFormat('unsupported-format')],
};

export const bulkEditPreviewBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['content'],
  properties: {
    content,
    format: formatSchema,
    mappings: mappingsSchema,
    createIfNotExists: { type: 'boolean', default: false },
  },
};
export const bulkEditPreviewInvalid: InputErrors = {
  code: 'bad-request',
  rules: [unsupportedFormat('unsupported-format')],
};

/** An s3Key that names an object: what makes an import asynchronous (the spec: "present and non-empty"). */
const hasS3Key: JsonSchema = { required: ['s3Key'], properties: { s3Key: { type: 'string', minLength: 1 } } };

/**
 * One route, two flows: a non-empty `s3Key` queues a job (with `config`), else `content` is
 * imported now. The conditions say which fields each flow needs.
 */
export const importBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    s3Key: { type: 'string', description: 'async flow: the uploaded object (content is then ignored)' },
    config: importConfigSchema,
    content: {
      type: 'string',
      description: `sync flow: the CSV text (at most ${SYNC_MAX_BYTES} bytes and ${SYNC_MAX_ROWS} rows)`,
    },
    format: formatSchema,
    mappings: mappingsSchema,
    createIfNotExists: { type: 'boolean', default: false },
    skipErrorRows: { type: 'boolean', default: true },
    batchSize: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
    operationName: operationNameSchema,
    fieldsToUpdate: fieldsToUpdateSchema,
  },
  allOf: [
    { if: { required: ['config'] }, then: hasS3Key },
    { if: { not: hasS3Key }, then: { required: ['content'] } },
  ],
};
export const importInvalid: InputErrors = {
  code: 'bad-request',
  rules: [
    invalidConfig,
    {
      field: 's3Key',
      keyword: ['required', 'minLength'],
      code: 'bad-request/missing-s3-key',
      message: 'An async import (config given) needs s3Key',
    },
    unknownFieldsToUpdate,
    unsupportedFormat('unsupported-format'),
    {
      field: 'content',
      keyword: 'required',
      code: 'bad-request',
      message: 'content (sync import) or s3Key (async import) is required',
    },
  ],
};

export const validateBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['s3Key'],
  properties: { s3Key: { type: 'string', minLength: 1 }, config: importConfigSchema },
};
export const validateInvalid: InputErrors = { code: 'bad-request', rules: [invalidConfig] };

const SELECTIONS = ['selected', 'filter', 'all'];

/**
 * The body of both exports: a layout and a selection (its ids, its filters or everything). Both
 * take at most MAX_EXPORT_IDS ids (the spec's too-many-products): the ids become the database's
 * query parameters, which are bounded; the sync one answers at most SYNC_EXPORT_MAX products.
 */
function exportBodyFor(maxIds: number): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['format', 'selection'],
    properties: {
      format: formatSchema,
      selection: { type: 'string', enum: SELECTIONS, description: 'selected (productIds), filter (filters) or all' },
      productIds: {
        type: 'array',
        items: { type: 'string', minLength: 1 },
        maxItems: maxIds,
        description: `ids or SKUs (at most ${maxIds})`,
      },
      filters: productFiltersSchema,
    },
    allOf: [
      {
        if: { required: ['selection'], properties: { selection: { const: 'selected' } } },
        then: { required: ['productIds'], properties: { productIds: { type: 'array', minItems: 1 } } },
      },
      {
        if: { required: ['selection'], properties: { selection: { const: 'filter' } } },
        then: { required: ['filters'] },
      },
    ],
  };
}
export const syncExportBody = exportBodyFor(MAX_EXPORT_IDS);
export const asyncExportBody = exportBodyFor(MAX_EXPORT_IDS);

/** The spec's codes, in the order the checks ran before they were declared here: the body's shape first. */
export const exportInvalid: InputErrors = {
  code: 'bad-request',
  rules: [
    { field: 'format', keyword: ['required', 'type'], code: 'bad-request' },
    { field: 'selection', keyword: ['required', 'type'], code: 'bad-request' },
    { keyword: 'additionalProperties', code: 'bad-request' },
    unsupportedFormat('unsupported-format'),
    {
      field: 'productIds',
      keyword: 'maxItems',
      code: 'too-many-products',
      message: `At most ${MAX_EXPORT_IDS} productIds`,
    },
    {
      field: 'selection',
      keyword: 'enum',
      code: 'invalid-selection',
      message: 'selection must be selected, filter or all',
    },
    {
      field: 'productIds',
      keyword: ['required', 'minItems'],
      code: 'missing-products',
      message: 'selection "selected" needs productIds',
    },
    {
      field: 'filters',
      keyword: 'required',
      code: 'missing-filters',
      message: 'selection "filter" needs filters',
    },
  ],
};
