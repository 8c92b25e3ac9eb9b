import type { CsvRecord, Layout, ParsedProduct, PresentedProduct } from '../layout';
import { nestsDeeperThan } from '../../flows/value-fit';
import { getPath, setPath } from '../paths';

/** How deep a JSON cell may nest: as deep as a request body (api/route.ts MAX_BODY_DEPTH). */
const MAX_CELL_DEPTH = 64;

/**
 * Our own layout: every stored product and variant field, one row per variant (a product
 * without variants is one row). Product columns repeat on each row of a product (the first row
 * is read); variant columns start with `variant.`. Scalars are plain text, simple lists are
 * joined with " | ", and nested structures are JSON in their column, so nothing is lost.
 */
type Kind = 'string' | 'number' | 'boolean' | 'list' | 'json' | 'translated';

interface Column {
  name: string;
  /** Path in the product (or the variant, for `variant.` columns), split once: an export reads 80 a row. */
  keys: string[];
  kind: Kind;
}

const PRODUCT: [string, Kind][] = [
  ['sku', 'string'],
  ['status', 'string'],
  ['productType', 'string'],
  ['title', 'translated'],
  ['description', 'translated'],
  ['htmlDescription', 'translated'],
  ['brand', 'string'],
  ['model', 'string'],
  ['productKind', 'string'],
  ['condition', 'string'],
  ['upc', 'string'],
  ['barcode', 'string'],
  ['barcodeType', 'string'],
  ['satCode', 'string'],
  ['price', 'number'],
  ['compareAtPrice', 'number'],
  ['cost', 'number'],
  ['currency', 'string'],
  ['taxable', 'boolean'],
  ['minAlertStock', 'number'],
  ['sellIfOutOfStock', 'boolean'],
  ['tags', 'list'],
  ['bullets', 'list'],
  ['category', 'json'],
  ['categoryMap', 'json'],
  ['seo.metaTitle', 'string'],
  ['seo.metaDescription', 'string'],
  ['seo.slug', 'string'],
  ['shipping', 'json'],
  ['media', 'json'],
  ['options', 'json'],
  ['attributes', 'json'],
  ['metafields', 'json'],
  ['bindings', 'json'],
  ['priceSchemas', 'json'],
  ['costs', 'json'],
  ['bundleConfig', 'json'],
  ['supplyConfig', 'json'],
  ['materialConfig', 'json'],
  ['billOfMaterials', 'json'],
  ['modifiersConfig', 'json'],
  ['fitmentConfig', 'json'],
];

const VARIANT: [string, Kind][] = [
  ['id', 'string'],
  ['sku', 'string'],
  ['title', 'translated'],
  ['price', 'number'],
  ['compareAtPrice', 'number'],
  ['cost', 'number'],
  ['position', 'number'],
  ['options', 'json'],
  ['productType', 'string'],
  ['imageId', 'string'],
  ['barcode', 'string'],
  ['barcodeType', 'string'],
  ['satCode', 'string'],
  ['taxable', 'boolean'],
  ['countryOfOrigin', 'string'],
  ['minAlertStock', 'number'],
  ['sellIfOutOfStock', 'boolean'],
  ['shipping', 'json'],
  ['priceSchemas', 'json'],
  ['costs', 'json'],
  ['bindings', 'json'],
];

const columnsOf = (prefix: string, defs: [string, Kind][]): Column[] =>
  defs.flatMap(([path, kind]) =>
    kind === 'translated'
      ? [
          { name: `${prefix}${path}`, keys: [...path.split('.'), 'value'], kind: 'string' as Kind },
          { name: `${prefix}${path}.translations`, keys: [...path.split('.'), 'translations'], kind: 'json' as Kind },
        ]
      : [{ name: `${prefix}${path}`, keys: path.split('.'), kind }],
  );

const productColumns = columnsOf('', PRODUCT);
const variantColumns = columnsOf('variant.', VARIANT);

function encode(value: unknown, kind: Kind): string {
  if (value === undefined || value === null) return '';
  if (kind === 'list') {
    const items = (value as unknown[]).map(String);
    const joined = items.join(' | ');
    // items the ' | ' form cannot carry (a '|' inside, edge spaces, an empty one) go as a JSON array
    const plain = items.every((i) => i !== '' && !i.includes('|') && i.trim() === i) && !joined.startsWith('[');
    return plain ? joined : JSON.stringify(items);
  }
  if (kind === 'json') return Array.isArray(value) && value.length === 0 ? '' : JSON.stringify(value);
  return String(value);
}

/** A list cell written as a JSON array of strings (what encode writes when ' | ' cannot carry the items). */
function listItems(text: string): string[] | null {
  if (!text.trimStart().startsWith('[')) return null;
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : null;
  } catch {
    return null; // '[new] arrivals | sale' is a list of two
  }
}

/** Decodes a cell; throws with the column named when the text is not of the column's kind. */
function decode(text: string, col: Column): unknown {
  switch (col.kind) {
    case 'number': {
      const n = Number(text.trim());
      if (text.trim() === '' || !Number.isFinite(n)) throw new Error(`${col.name}: "${text}" is not a number`);
      return n;
    }
    case 'boolean': {
      const t = text.trim().toLowerCase();
      if (['true', '1', 'yes'].includes(t)) return true;
      if (['false', '0', 'no'].includes(t)) return false;
      throw new Error(`${col.name}: "${text}" is not true or false`);
    }
    case 'list':
      return (
        listItems(text) ??
        text
          .split('|')
          .map((s) => s.trim())
          .filter(Boolean)
      );
    case 'json': {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        throw new Error(`${col.name}: not valid JSON`);
      }
      // a cell is held to what a request body may nest: what checks it afterwards walks it
      if (nestsDeeperThan(value, MAX_CELL_DEPTH))
        throw new Error(`${col.name}: the JSON nests deeper than ${MAX_CELL_DEPTH} levels`);
      return value;
    }
    default:
      return text;
  }
}

function read(values: Record<string, string>, cols: Column[], errors: string[]): Record<string, any> {
  const out: Record<string, any> = {};
  for (const col of cols) {
    const text = values[col.name];
    if (text === undefined || text === '') continue;
    try {
      setPath(out, col.keys, decode(text, col));
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  return out;
}

export const nativeLayout: Layout = {
  format: 'native',
  columns: [...productColumns, ...variantColumns].map((c) => c.name),

  // rows of one product share its SKU; no SKU is derived
  keyColumns: (header: string[]) => header.filter((c) => c === 'sku'),
  givenSkus: () => new Set<string>(),

  parse(records: CsvRecord[]): ParsedProduct[] {
    // rows of one product share its sku; they need not be adjacent
    const groups = new Map<string, CsvRecord[]>();
    const out: ParsedProduct[] = [];
    // what the header carries: an update writes these parts and keeps the others. Every
    // record's columns, not the first one's: a tool that drops trailing empty cells writes short
    // records, and a short first one must not hide a column the later ones give (the async
    // import parses each product from its own records, so this is the same there)
    const header = new Set(records.flatMap((r) => Object.keys(r.values)));
    const carried = {
      product: productColumns.filter((c) => header.has(c.name)).map((c) => c.keys),
      variant: variantColumns.filter((c) => header.has(c.name)).map((c) => c.keys),
    };
    for (const record of records) {
      // a spreadsheet's row of empty cells is no product
      if (Object.values(record.values).every((v) => v.trim() === '')) continue;
      const sku = (record.values.sku ?? '').trim().toUpperCase();
      if (!sku) {
        out.push({ rows: [record.row], sku: null, body: null, errors: ['sku: required'] });
        continue;
      }
      const group = groups.get(sku) ?? [];
      group.push(record);
      groups.set(sku, group);
    }
    for (const [sku, group] of groups) {
      const errors: string[] = [];
      // the product's columns are read from its first row: a later row giving one another value
      // would be reported written and dropped, so the product's rows fail together instead
      const first = group[0];
      for (const r of group.slice(1)) {
        const differs = productColumns.find((c) => {
          if (c.name === 'sku') return false; // grouped by it, letter case aside
          const v = (r.values[c.name] ?? '').trim();
          return v !== '' && v !== (first.values[c.name] ?? '').trim();
        });
        if (differs)
          errors.push(
            `${differs.name}: row ${r.row} gives product ${sku} another value than row ${first.row}; a product's rows must agree on its columns`,
          );
      }
      const body = read(group[0].values, productColumns, errors);
      body.sku = String(body.sku).trim(); // the SKU the rows are grouped by, as the spec keeps it: trimmed
      const variants = group
        .filter((r) => (r.values['variant.sku'] ?? '').trim() !== '')
        .map((r) => read(r.values, variantColumns, errors));
      for (const v of variants) if (typeof v.sku === 'string') v.sku = v.sku.trim();
      if (variants.length) body.variants = variants;
      out.push({ rows: group.map((r) => r.row), sku, body: errors.length ? null : body, errors, carried });
    }
    return out.sort((a, b) => a.rows[0] - b.rows[0]);
  },

  toRecords(product: PresentedProduct): Record<string, string>[] {
    const base: Record<string, string> = {};
    for (const col of productColumns) base[col.name] = encode(getPath(product, col.keys), col.kind);
    const variants: Record<string, any>[] = product.variants ?? [];
    if (variants.length === 0) return [base];
    const inherited = product.minAlertStock ?? 5;
    return variants.map((v) => {
      const row = { ...base };
      for (const col of variantColumns) row[col.name] = encode(getPath(v, col.keys), col.kind);
      // a variant's minAlertStock is presented resolved: write it only when it is its own
      if (v.minAlertStock === inherited) row['variant.minAlertStock'] = '';
      return row;
    });
  },
};
