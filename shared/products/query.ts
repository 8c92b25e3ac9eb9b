import type { Filter, Sort } from 'mongodb';
import type { ProductDoc } from './types';
import { channelIdOf } from './normalize';
import { STATUSES } from './schema';
import { errors } from '../errors/catalog';
import type { JsonSchema } from '../validation';

export interface ProductFilters {
  q?: string;
  status?: string[];
  category?: string;
  brands?: string[];
  minPrice?: number;
  maxPrice?: number;
  tags?: string[];
  channelId?: string;
}

/**
 * The most values a list filter (brands, tags, status) takes. More is never a real filter, and far
 * more would exceed what the store takes in one condition (SQLite's bound variables: a 500).
 */
export const MAX_FILTER_VALUES = 100;
/** Filter and search text without NUL: no filter needs one, and with one the store failed the query (a 500). */
export const NO_NUL_PATTERN = '^[^\\u0000]*$';
const filterText = (maxLength: number, description?: string): JsonSchema => ({
  type: 'string',
  maxLength,
  pattern: NO_NUL_PATTERN,
  ...(description ? { description } : {}),
});
const filterList = (items: JsonSchema, description?: string): JsonSchema => ({
  type: 'array',
  maxItems: MAX_FILTER_VALUES,
  items,
  ...(description ? { description } : {}),
});

/**
 * The product filters as a JSON body carries them (POST /products/query, publication, CSV
 * export): the one schema every filter body is validated with, beside the function that turns
 * it into a condition. Query strings carry the same filters as comma lists (filtersFrom).
 */
export const productFiltersSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    q: filterText(200, 'search term: every word must match the SKU, a variant SKU, the title, the brand or a tag'),
    status: filterList({ type: 'string', enum: [...STATUSES] }),
    category: filterText(1000, 'category id, name or path'),
    brands: filterList(filterText(200), 'brands (exact)'),
    minPrice: { type: 'number', minimum: 0 },
    maxPrice: { type: 'number', minimum: 0 },
    tags: filterList(filterText(200), 'a product with any of them matches'),
    channelId: filterText(100, 'products bound to this channel'),
  },
};

/** The longest comma list a query string takes for one filter. */
const MAX_COMMA_LIST_LENGTH = 2000;

/** A list filter as a query string carries it: its values comma-separated, at most MAX_FILTER_VALUES of them. */
function commaForm(list: JsonSchema): JsonSchema {
  const items = list.items as JsonSchema;
  // free text: a backslash takes the next character as it is, so `\,` is a comma inside a value
  const one = Array.isArray(items.enum)
    ? `(${(items.enum as string[]).map(escapeRegex).join('|')})`
    : '([^,\\\\]|\\\\[\\s\\S])*';
  return {
    type: 'string',
    maxLength: MAX_COMMA_LIST_LENGTH,
    pattern: `^${one}(,${one}){0,${MAX_FILTER_VALUES - 1}}$`,
    description: `comma-separated (at most ${MAX_FILTER_VALUES}; \\, is a comma in a value, \\\\ a backslash)${list.description ? `: ${String(list.description)}` : ''}`,
  };
}

/**
 * The product filters as a query string carries them (GET /products, /products/count): the
 * definitions of productFiltersSchema, with every list as a comma-separated text (filtersFrom
 * reads them back).
 */
export const productFiltersQuery: Record<string, JsonSchema> = Object.fromEntries(
  Object.entries(productFiltersSchema.properties as Record<string, JsonSchema>).map(([name, schema]) => [
    name,
    schema.type === 'array' ? commaForm(schema) : schema,
  ]),
);

export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A comma-separated query value as a list (`brands=Acme,Globex`). A brand or a tag is free text and
 * may hold a comma, so a backslash takes the next character as it is: `brands=Smith\, Sons` is one
 * brand, `\\` one backslash.
 */
export function commaList(value: unknown): string[] | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  // a JSON array (a filter body) holds its values as they are, as POST /products/query reads
  // them (a brand "Acme " is not "Acme"): only query text is split, trimmed and unescaped. A
  // blank value names nothing, in either form.
  const parts = (Array.isArray(value) ? value.map(String) : splitUnescaped(String(value))).filter(
    (part) => part.trim() !== '',
  );
  return parts.length ? parts : undefined;
}

/**
 * Query text split at unescaped commas, each part without the blanks around it; an escaped blank
 * is kept (`brands=Acme\ ` names the brand "Acme " a write stored with its space).
 */
function splitUnescaped(text: string): string[] {
  const parts: string[] = [];
  let part = '';
  // where the part's escaped characters begin and end: the blanks trimmed lie outside them
  let first = -1;
  let last = -1;
  const end = () => {
    parts.push(
      first < 0 ? part.trim() : part.slice(0, first).trimStart() + part.slice(first, last) + part.slice(last).trimEnd(),
    );
    part = '';
    first = last = -1;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length) {
      if (first < 0) first = part.length;
      part += text[++i];
      last = part.length;
    } else if (c === ',') end();
    else part += c;
  }
  end();
  return parts;
}

/** ProductFilters from a query string or a body's `filters` (lists as arrays or comma-separated). */
export function filtersFrom(q: Record<string, unknown>): ProductFilters {
  return {
    q: q.q as string | undefined,
    status: commaList(q.status),
    category: q.category as string | undefined,
    brands: commaList(q.brands),
    minPrice: q.minPrice as number | undefined,
    maxPrice: q.maxPrice as number | undefined,
    tags: commaList(q.tags),
    channelId: q.channelId as string | undefined,
  };
}

/**
 * Text search without $text (not on FerretDB): each whitespace-separated token must be found, case
 * insensitive, in the SKU, a variant SKU, the title, the brand or a tag. They are kept, lower-cased,
 * in the product's `search` field (search.ts), so a token is one regular expression on that field.
 */
export function searchClause(q: string): { clause: Filter<ProductDoc>; strategy: string } {
  // every word: q holds at most 200 characters, so at most 100 words
  const tokens = [...new Set(q.trim().split(/\s+/).filter(Boolean))];
  const one = (token: string): Filter<ProductDoc> => ({ search: new RegExp(escapeRegex(token.toLowerCase())) });
  if (tokens.length <= 1) return { clause: one(tokens[0] ?? ''), strategy: 'regex' };
  return { clause: { $and: tokens.map(one) } as Filter<ProductDoc>, strategy: 'tokens' };
}

export function buildFilter(f: ProductFilters): { filter: Filter<ProductDoc>; searchStrategy: string | null } {
  // the guard for every caller, whatever schema (or comma list) the filters came through
  for (const name of ['status', 'brands', 'tags'] as const) {
    if ((f[name]?.length ?? 0) > MAX_FILTER_VALUES)
      throw errors.invalidInput(`${name} takes at most ${MAX_FILTER_VALUES} values`, [
        { field: name, message: `must have at most ${MAX_FILTER_VALUES} values` },
      ]);
  }
  const and: Filter<ProductDoc>[] = [];
  let searchStrategy: string | null = null;
  if (f.q && f.q.trim()) {
    const { clause, strategy } = searchClause(f.q);
    and.push(clause);
    searchStrategy = strategy;
  }
  if (f.status?.length) and.push({ status: { $in: f.status } } as Filter<ProductDoc>);
  if (f.category)
    and.push({
      $or: [{ 'category.id': f.category }, { 'category.name': f.category }, { 'category.path': f.category }],
    } as Filter<ProductDoc>);
  if (f.brands?.length) and.push({ brand: { $in: f.brands } });
  if (f.minPrice !== undefined) and.push({ price: { $gte: f.minPrice } });
  if (f.maxPrice !== undefined) and.push({ price: { $lte: f.maxPrice } });
  if (f.tags?.length) and.push({ tags: { $in: f.tags } } as Filter<ProductDoc>);
  // a channel id is stored lower-case (normalize.ts): sent in any case, it names the same channel
  if (f.channelId) and.push({ 'bindings.channelId': channelIdOf(f.channelId) } as Filter<ProductDoc>);
  const filter = and.length === 0 ? {} : and.length === 1 ? and[0] : ({ $and: and } as Filter<ProductDoc>);
  return { filter, searchStrategy };
}

export const SORT_FIELDS: Record<string, string> = {
  createdAt: 'createdAt',
  updatedAt: 'updatedAt',
  price: 'price',
  sku: 'sku',
  title: 'title.value',
};

/** `-price` → price descending; ties broken by _id so pages never overlap. */
export function buildSort(sort = '-createdAt'): Sort {
  const desc = sort.startsWith('-');
  const field = SORT_FIELDS[desc ? sort.slice(1) : sort] ?? 'createdAt';
  return { [field]: desc ? -1 : 1, _id: desc ? -1 : 1 };
}
