import type { Carried, CsvRecord, Layout, ParsedProduct, PresentedProduct } from '../layout';
import {
  columnsOf,
  cell,
  CellError,
  carriedPaths,
  claimSku,
  compact,
  decodeWooText,
  deriveSku,
  encodeWooText,
  formatNumber,
  joinWooList,
  mediaId,
  mediaName,
  mediaSrc,
  optionId,
  ownEntry,
  parseBool,
  parseCategoryPath,
  parseIndex,
  parseMeasure,
  parseMoney,
  prefixFormula,
  Problems,
  roundMeasure,
  splitWooList,
  toSku,
  unique,
  unprefixFormula,
} from './values';

/**
 * WooCommerce's product CSV (WC_Product_CSV_Importer / WC_Product_CSV_Exporter), read the way
 * WooCommerce reads it and written the way it exports.
 *
 * - Every cell is un-prefixed first: exports write a value starting with = + - @ as `'…`.
 * - Type: simple, variable, variation, grouped, external, with the flags `downloadable` and
 *   `virtual` ("simple, downloadable, virtual"); either flag makes productType digital, and
 *   `virtual` sets shipping.requiresShipping false. A blank Type is simple.
 * - A variation joins its parent through Parent (a SKU, or `id:N` for the parent's ID), wherever
 *   the parent is in the file; one whose parent is not in the file is reported on its row.
 * - Published 1 / 0 / -1 (also true/false) → active / disabled (private) / draft.
 * - Lists (Categories, Tags, Images, attribute values, Grouped products) are comma-separated with
 *   `\,` for a comma inside an item. Description and Short description turn a literal `\n` into a
 *   newline (and `\\n` into a literal `\n`), as WooCommerce's importer does.
 * - Sale price set: price = Sale, compareAtPrice = Regular (kept only when above the price).
 *   A variable parent without a price takes its lowest variation price; no price at all is 0.
 * - Categories `A > B, C`: the first path is category {name: 'B', path: 'A > B'}; the others go to
 *   categoryMap as {domain: 'woocommerce', value: path} (not to tags, so tags stay WooCommerce's
 *   own Tags and both survive a round trip).
 * - Description → htmlDescription, Short description → description.
 * - Attributes: on a variable parent (or a product with variations) they are the options; a
 *   variation's attribute values pick its option values (a blank value is WooCommerce's "any",
 *   so the variant has no value for that option); on other products each value is an attribute
 *   {name, value}.
 * - Weight and dimensions take their unit from the header ("Weight (lbs)", "Length (cm)", …).
 * - No SKU: `WC-<ID>`, else the name as a SKU; a variation without one: parent SKU + its values.
 * - What a product has no field for is kept as metafields in namespace `woocommerce`:
 *   grouped_products (json list), external_url, button_text, downloads (json [{name, url}]).
 * Not carried: stock (the inventory service holds it), featured, visibility, sale dates, tax
 * class, reviews, purchase note, upsells, cross-sells, and a variation's own description.
 */

const WOOCOMMERCE_COLUMNS_BEFORE_REPEATS = [
  'ID',
  'Type',
  'SKU',
  'Name',
  'Published',
  'Is featured?',
  'Visibility in catalog',
  'Short description',
  'Description',
  'Date sale price starts',
  'Date sale price ends',
  'Tax status',
  'Tax class',
  'In stock?',
  'Stock',
  'Backorders allowed?',
  'Sold individually?',
  'Weight (lbs)',
  'Length (in)',
  'Width (in)',
  'Height (in)',
  'Allow customer reviews?',
  'Purchase note',
  'Sale price',
  'Regular price',
  'Categories',
  'Tags',
  'Shipping class',
  'Images',
  'Download limit',
  'Download expiry days',
  'Parent',
  'Grouped products',
  'Upsells',
  'Cross-sells',
  'External URL',
  'Button text',
  'Position',
];

/**
 * The columns, with `attributes` Attribute N groups and `downloads` Download N groups: the
 * template has three and two, as WooCommerce's; an export has as many as its products need
 * (WooCommerce's exporter widens them too), so a fourth attribute is written, not dropped.
 */
export function woocommerceColumns(attributes = 3, downloads = 2): string[] {
  const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
  return [
    ...WOOCOMMERCE_COLUMNS_BEFORE_REPEATS,
    ...upTo(attributes).flatMap((n) => [
      `Attribute ${n} name`,
      `Attribute ${n} value(s)`,
      `Attribute ${n} visible`,
      `Attribute ${n} global`,
    ]),
    ...upTo(downloads).flatMap((n) => [`Download ${n} name`, `Download ${n} URL`]),
  ];
}

export const WOOCOMMERCE_COLUMNS = woocommerceColumns();

/** How many Attribute N and Download N groups a product's records need. */
function repeats(p: Record<string, any>): [attributes: number, downloads: number] {
  const options: unknown[] = Array.isArray(p.options) ? p.options : [];
  const hasVariants = (Array.isArray(p.variants) && p.variants.length > 0) || options.length > 0;
  const attributeNames = new Set(
    (Array.isArray(p.attributes) ? p.attributes : []).map((a: { name: string }) => a.name),
  );
  return [hasVariants ? options.length : attributeNames.size, downloadsOf(p).length];
}

const ALIASES = {
  id: 'ID',
  type: 'Type',
  sku: 'SKU',
  name: 'Name',
  published: 'Published',
  shortDescription: 'Short description',
  description: 'Description',
  taxStatus: 'Tax status',
  backorders: 'Backorders allowed?',
  salePrice: 'Sale price',
  regularPrice: 'Regular price',
  categories: 'Categories',
  tags: 'Tags',
  shippingClass: 'Shipping class',
  images: 'Images',
  parent: 'Parent',
  grouped: 'Grouped products',
  externalUrl: 'External URL',
  buttonText: 'Button text',
  position: 'Position',
} as const;
type Role = keyof typeof ALIASES;

const WEIGHT_UNITS: Record<string, 'g' | 'kg' | 'lb' | 'oz'> = { g: 'g', kg: 'kg', lb: 'lb', lbs: 'lb', oz: 'oz' };
const LENGTH_UNITS: Record<string, 'mm' | 'cm' | 'm' | 'in'> = { mm: 'mm', cm: 'cm', m: 'm', in: 'in' };
/** Export units (the sample store's): pounds and inches. */
const TO_LB: Record<string, number> = { lb: 1, g: 1 / 453.59237, kg: 1 / 0.45359237, oz: 1 / 16 };
const TO_IN: Record<string, number> = { in: 1, mm: 1 / 25.4, cm: 1 / 2.54, m: 1 / 0.0254 };

const NS = 'woocommerce';

interface Columns {
  role: Partial<Record<Role, string>>;
  weight?: { column: string; unit?: 'g' | 'kg' | 'lb' | 'oz'; raw: string };
  dims: { length?: string; width?: string; height?: string; unit?: 'mm' | 'cm' | 'm' | 'in'; raw?: string };
  attributes: { n: number; name: string; values: string }[];
  downloads: { n: number; name?: string; url?: string }[];
}

function resolveColumns(header: Iterable<string>): Columns {
  const names = [...header];
  const byLower = new Map(names.map((n) => [n.trim().toLowerCase(), n]));
  const cols: Columns = { role: {}, dims: {}, attributes: [], downloads: [] };
  for (const role of Object.keys(ALIASES) as Role[]) {
    const name = byLower.get(ALIASES[role].toLowerCase());
    if (name !== undefined) cols.role[role] = name;
  }
  const attrs = new Map<number, { name?: string; values?: string }>();
  const downloads = new Map<number, { name?: string; url?: string }>();
  for (const name of names) {
    const t = name.trim();
    let m: RegExpMatchArray | null;
    if ((m = t.match(/^weight\s*\(([^)]*)\)$/i)))
      cols.weight = { column: name, unit: ownEntry(WEIGHT_UNITS, m[1].trim().toLowerCase()), raw: m[1] };
    else if ((m = t.match(/^(length|width|height)\s*\(([^)]*)\)$/i))) {
      cols.dims[m[1].toLowerCase() as 'length' | 'width' | 'height'] = name;
      cols.dims.unit = ownEntry(LENGTH_UNITS, m[2].trim().toLowerCase());
      cols.dims.raw = m[2];
    } else if ((m = t.match(/^attribute (\d+) (name|value\(s\))$/i))) {
      const a = attrs.get(+m[1]) ?? {};
      if (m[2].toLowerCase() === 'name') a.name = name;
      else a.values = name;
      attrs.set(+m[1], a);
    } else if ((m = t.match(/^download (\d+) (name|url)$/i))) {
      const d = downloads.get(+m[1]) ?? {};
      if (m[2].toLowerCase() === 'name') d.name = name;
      else d.url = name;
      downloads.set(+m[1], d);
    }
  }
  cols.attributes = [...attrs]
    .filter(([, a]) => a.name && a.values)
    .sort(([a], [b]) => a - b)
    .map(([n, a]) => ({ n, name: a.name!, values: a.values! }));
  cols.downloads = [...downloads].sort(([a], [b]) => a - b).map(([n, d]) => ({ n, ...d }));
  return cols;
}

/**
 * What a file carries, by the columns its header has (shared/csv/merge.ts): a product, variation
 * or image the file updates keeps the stored parts these do not name. The columns below are read
 * alike on a parent and on a variation; a sale price and a regular price decide the price and the
 * compare-at price together.
 */
const COMMON_PATHS: [Role, string[]][] = [
  ['name', ['title.value']],
  ['salePrice', ['price', 'compareAtPrice']],
  ['regularPrice', ['price', 'compareAtPrice']],
  ['type', ['productType', 'shipping.requiresShipping']], // the downloadable and virtual flags
  ['taxStatus', ['taxable']],
  ['backorders', ['sellIfOutOfStock']],
  ['shippingClass', ['shipping.shippingClass']],
];
const PRODUCT_PATHS: [Role, string[]][] = [
  ['published', ['status']],
  ['shortDescription', ['description.value']],
  ['description', ['htmlDescription.value']],
  ['categories', ['category.name', 'category.path', 'categoryMap']],
  ['tags', ['tags']],
  ['images', ['media']],
];

function carriedBy(cols: Columns): Carried {
  const present = (table: [Role, string[]][]) => table.flatMap(([role, paths]) => (cols.role[role] ? paths : []));
  const shipping = [
    ...(cols.weight ? ['shipping.weight', 'shipping.weightUnit'] : []),
    ...(['length', 'width', 'height'] as const).flatMap((side) =>
      cols.dims[side] ? [`shipping.dimensions.${side}`] : [],
    ),
    ...(cols.dims.raw !== undefined ? ['shipping.dimensions.unit'] : []), // any side's column names it
  ];
  const options = cols.attributes.length ? ['options'] : [];
  const attributes = cols.attributes.length ? ['attributes'] : []; // a product without variations's
  return carriedPaths({
    product: ['sku', ...present(COMMON_PATHS), ...present(PRODUCT_PATHS), ...shipping, ...options, ...attributes],
    // a variation's position is its Position, else its place among its parent's variations
    variant: [
      'sku',
      'position',
      ...present(COMMON_PATHS),
      ...(cols.role.images ? ['imageId'] : []),
      ...shipping,
      ...options,
    ],
    // media ids and names are made up (img-1, the URL's file name), and Images has no alt text:
    // a stored image keeps its own
    media: ['src', 'position'],
    // without a Name column a variation's title is made of its attribute values
    fromOptions: cols.role.name ? [] : ['title.value'],
    // a parent row's commerce columns are read as a variation's: a blank is "none"
    cleared: [...present(COMMON_PATHS).filter((path) => path !== 'title.value'), ...shipping],
    // the product type is written as the Type's flags (lossyCells)
    lossy: { format: 'woocommerce', paths: ['productType', 'shipping.requiresShipping'] },
  });
}

interface Row {
  rec: CsvRecord;
  /** A cell, trimmed and un-prefixed. */
  get(column: string | undefined): string;
  role(role: Role): string;
  kind: 'simple' | 'variable' | 'variation' | 'grouped' | 'external';
  downloadable: boolean;
  virtual: boolean;
}

const KINDS = ['simple', 'variable', 'variation', 'grouped', 'external'] as const;

function readType(text: string): { kind: Row['kind']; downloadable: boolean; virtual: boolean } {
  const parts = text
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const kinds = parts.filter((p) => (KINDS as readonly string[]).includes(p)) as Row['kind'][];
  const unknown = parts.filter(
    (p) => !(KINDS as readonly string[]).includes(p) && p !== 'downloadable' && p !== 'virtual',
  );
  if (unknown.length || kinds.length > 1)
    throw new CellError(
      `is not a WooCommerce product type (simple, variable, variation, grouped, external; downloadable, virtual): ${JSON.stringify(text)}`,
    );
  return {
    kind: kinds[0] ?? 'simple',
    downloadable: parts.includes('downloadable'),
    virtual: parts.includes('virtual'),
  };
}

function parsePublished(text: string): 'active' | 'disabled' | 'draft' | undefined {
  const t = text.trim().toLowerCase();
  if (t === '') return undefined;
  if (t === '1' || t === 'true' || t === 'publish') return 'active';
  if (t === '0' || t === 'private') return 'disabled';
  if (t === '-1' || t === 'false' || t === 'draft') return 'draft';
  throw new CellError(`is not 1 (published), 0 (private) or -1 (draft): ${JSON.stringify(text)}`);
}

function parseTaxStatus(text: string): boolean | undefined {
  const t = text.trim().toLowerCase();
  if (t === '') return undefined;
  if (t === 'taxable') return true;
  if (t === 'none' || t === 'shipping') return false;
  throw new CellError(`is not taxable, shipping or none: ${JSON.stringify(text)}`);
}

function parseBackorders(text: string): boolean | undefined {
  const t = text.trim().toLowerCase();
  if (t === 'notify') return true;
  return parseBool(t);
}

interface Group {
  parent: Row;
  variations: Row[];
}

function build(group: Group, cols: Columns, taken: Set<string>, problems: Problems): Record<string, unknown> {
  const { parent, variations } = group;
  const read = <T>(r: Row, column: string | undefined, fn: (text: string) => T): T | undefined =>
    column === undefined ? undefined : problems.read(`${column} (row ${r.rec.row})`, () => fn(r.get(column)));
  const readRole = <T>(r: Row, role: Role, fn: (text: string) => T) => read(r, cols.role[role], fn);

  const pricing = (r: Row) => {
    const sale = readRole(r, 'salePrice', parseMoney);
    const regular = readRole(r, 'regularPrice', parseMoney);
    if (sale !== undefined)
      return { price: sale, compareAtPrice: regular !== undefined && regular > sale ? regular : undefined };
    return { price: regular, compareAtPrice: undefined };
  };
  const shippingOf = (r: Row) => {
    const weight = cols.weight ? read(r, cols.weight.column, parseMeasure) : undefined;
    if (weight !== undefined && !cols.weight!.unit)
      problems.add(`${cols.weight!.column}: unknown weight unit ${JSON.stringify(cols.weight!.raw)} (g, kg, lbs, oz)`);
    const [length, width, height] = (['length', 'width', 'height'] as const).map((d) =>
      read(r, cols.dims[d], parseMeasure),
    );
    const hasDims = length !== undefined || width !== undefined || height !== undefined;
    if (hasDims && !cols.dims.unit)
      problems.add(`dimensions: unknown length unit ${JSON.stringify(cols.dims.raw)} (mm, cm, m, in)`);
    const s = compact({
      weight,
      weightUnit: weight !== undefined ? cols.weight!.unit : undefined,
      dimensions: hasDims ? compact({ length, width, height, unit: cols.dims.unit }) : undefined,
      requiresShipping: r.virtual ? false : undefined,
      shippingClass: r.role('shippingClass') || undefined,
    });
    return Object.keys(s).length ? s : undefined;
  };
  const common = (r: Row) =>
    compact({
      productType: r.downloadable || r.virtual ? ('digital' as const) : undefined,
      taxable: readRole(r, 'taxStatus', parseTaxStatus),
      sellIfOutOfStock: readRole(r, 'backorders', parseBackorders),
      shipping: shippingOf(r),
    });
  const text = (r: Row, role: Role) => {
    const column = cols.role[role];
    if (column === undefined) return undefined;
    const raw = unprefixFormula(r.rec.values[column] ?? '');
    return raw.trim() === '' ? undefined : decodeWooText(raw);
  };
  const attributesOf = (r: Row) =>
    cols.attributes.flatMap((a) => {
      const name = r.get(a.name);
      return name ? [{ name, values: splitWooList(r.get(a.values)) }] : [];
    });

  // --- media
  const media: { src: string; alt: string }[] = [];
  const addMedia = (src: string) => {
    if (!media.some((m) => m.src === src)) media.push({ src, alt: '' });
    return src;
  };
  for (const item of splitWooList(parent.role('images'))) {
    const src = read(parent, cols.role.images, () => mediaSrc(item));
    if (src !== undefined) addMedia(src);
  }

  // --- SKU, title
  const name = parent.role('name');
  if (!name) problems.add(`${cols.role.name ?? 'Name'} (row ${parent.rec.row}): required`);
  const id = parent.role('id');
  const sku =
    toSku(parent.role('sku')) || claimSku(id ? `WC-${toSku(id)}` : deriveSku(name || `row-${parent.rec.row}`), taken);

  // --- categories
  const paths = splitWooList(parent.role('categories'))
    .map(parseCategoryPath)
    .filter((c): c is { name: string; path: string } => c !== undefined);
  const extraPaths = unique(paths.slice(1).map((c) => c.path)).filter((p) => p !== paths[0]?.path);
  const tags = unique(splitWooList(parent.role('tags')));

  // --- options or attributes
  const hasVariants = parent.kind === 'variable' || variations.length > 0;
  const options: { id: string; name: string; values: string[] }[] = [];
  const attributes: { name: string; value: string }[] = [];
  for (const a of attributesOf(parent)) {
    if (hasVariants) options.push({ id: optionId(options.length), name: a.name, values: a.values });
    else for (const value of a.values) attributes.push({ name: a.name, value });
  }

  // --- variations
  const variants = variations.map((v, i) => {
    const opts = attributesOf(v).flatMap((a) => {
      const value = a.values[0]; // a variation names one value (blank: "any")
      if (!value) return [];
      let option = options.find((o) => o.name.toLowerCase() === a.name.toLowerCase());
      if (!option) options.push((option = { id: optionId(options.length), name: a.name, values: [] }));
      if (!option.values.includes(value)) option.values.push(value);
      return [{ id: option.id, name: option.name, value }];
    });
    const vid = v.role('id');
    const vsku =
      toSku(v.role('sku')) ||
      claimSku(
        opts.length ? deriveSku(sku, ...opts.map((o) => o.value)) : vid ? `WC-${toSku(vid)}` : `${sku}-${i + 1}`,
        taken,
      );
    const images = splitWooList(v.role('images'));
    const src = images.length ? read(v, cols.role.images, () => mediaSrc(images[0])) : undefined;
    const { price, compareAtPrice } = pricing(v);
    return {
      variant: compact({
        sku: vsku,
        title: { value: v.role('name') || opts.map((o) => o.value).join(', ') || vsku },
        price: price ?? 0,
        compareAtPrice,
        position: readRole(v, 'position', parseIndex) ?? i,
        options: opts,
        ...common(v),
      }),
      src: src !== undefined ? addMedia(src) : undefined,
    };
  });

  const mediaBody = media.map((m, i) => ({
    id: mediaId(i),
    src: m.src,
    name: mediaName(m.src, i + 1),
    position: i,
    alt: { value: m.alt },
  }));
  const variantBodies = variants.map(({ variant, src }) =>
    compact({ ...variant, imageId: src ? mediaBody.find((m) => m.src === src)!.id : undefined }),
  );

  const own = pricing(parent);
  const price = own.price ?? (variantBodies.length ? Math.min(...variantBodies.map((v) => v.price as number)) : 0);

  // --- what has no product field
  const metafields: { namespace: string; key: string; type: string; value: unknown }[] = [];
  const grouped = splitWooList(parent.role('grouped'));
  if (grouped.length) metafields.push({ namespace: NS, key: 'grouped_products', type: 'json', value: grouped });
  if (parent.role('externalUrl'))
    metafields.push({ namespace: NS, key: 'external_url', type: 'string', value: parent.role('externalUrl') });
  if (parent.role('buttonText'))
    metafields.push({ namespace: NS, key: 'button_text', type: 'string', value: parent.role('buttonText') });
  const downloads = cols.downloads.flatMap((d) => {
    const url = parent.get(d.url);
    const dname = parent.get(d.name);
    return url || dname ? [{ name: dname, url }] : [];
  });
  if (downloads.length) metafields.push({ namespace: NS, key: 'downloads', type: 'json', value: downloads });

  const description = text(parent, 'shortDescription');
  const html = text(parent, 'description');
  return compact({
    sku,
    title: { value: name },
    status: readRole(parent, 'published', parsePublished),
    ...common(parent),
    description: description !== undefined ? { value: description } : undefined,
    htmlDescription: html !== undefined ? { value: html } : undefined,
    price,
    compareAtPrice: own.price !== undefined ? own.compareAtPrice : undefined,
    category: paths[0],
    categoryMap: extraPaths.length ? extraPaths.map((value) => ({ domain: NS, value })) : undefined,
    tags: tags.length ? tags : undefined,
    media: mediaBody.length ? mediaBody : undefined,
    options: options.length ? options : undefined,
    attributes: attributes.length ? attributes : undefined,
    variants: variantBodies.length ? variantBodies : undefined,
    metafields: metafields.length ? metafields : undefined,
  });
}

/** The records as rows with their type read; a record whose type cannot be read is an error item. */
function readRows(records: CsvRecord[], cols: Columns): { rows: Row[]; refused: ParsedProduct[] } {
  const refused: ParsedProduct[] = [];
  const rows: Row[] = [];
  for (const rec of records) {
    if (Object.values(rec.values).every((v) => typeof v !== 'string' || v.trim() === '')) continue; // a row of empty cells makes nothing
    const get = (column: string | undefined) => unprefixFormula(cell(rec.values, column));
    const base = { rec, get, role: (role: Role) => get(cols.role[role]) };
    let type: ReturnType<typeof readType>;
    try {
      type = readType(base.role('type'));
    } catch (err) {
      if (!(err instanceof CellError)) throw err;
      refused.push({
        rows: [rec.row],
        sku: toSku(base.role('sku')) || null,
        body: null,
        errors: [`${cols.role.type} (row ${rec.row}): ${err.message}`],
      });
      continue;
    }
    rows.push({ ...base, ...type });
  }
  return { rows, refused };
}

const skusOfRows = (rows: Row[]) => new Set(rows.map((r) => toSku(r.role('sku'))).filter(Boolean));

/** The SKUs the records' rows give (derived SKUs avoid them). */
function givenSkus(records: CsvRecord[]): Set<string> {
  return skusOfRows(readRows(records, resolveColumns(columnsOf(records))).rows);
}

/** Grouping reads the type, SKU, ID and parent reference. */
function keyColumns(header: string[]): string[] {
  const cols = resolveColumns(header);
  return (['type', 'sku', 'id', 'parent'] as const).flatMap((role) => (cols.role[role] ? [cols.role[role]] : []));
}

function parse(records: CsvRecord[], given?: Set<string>): ParsedProduct[] {
  const cols = resolveColumns(columnsOf(records));
  const { rows, refused: out } = readRows(records, cols);

  // parents first, by SKU and by ID, so a variation may come before its parent
  const bySku = new Map<string, Group>();
  const byId = new Map<string, Group>();
  const groups: Group[] = [];
  for (const r of rows) {
    if (r.kind === 'variation') continue;
    const g: Group = { parent: r, variations: [] };
    groups.push(g);
    const s = toSku(r.role('sku'));
    if (s && !bySku.has(s)) bySku.set(s, g);
    const id = r.role('id');
    if (id && !byId.has(id)) byId.set(id, g);
  }
  const orphans = new Map<Row, string>();
  for (const r of rows) {
    if (r.kind !== 'variation') continue;
    const ref = r.role('parent');
    const idRef = ref.match(/^id:\s*(\S+)$/i)?.[1];
    const g =
      idRef !== undefined
        ? byId.get(idRef)
        : (bySku.get(toSku(ref)) ?? (/^\d+$/.test(ref) ? byId.get(ref) : undefined));
    if (g) g.variations.push(r);
    else
      orphans.set(
        r,
        ref
          ? `${cols.role.parent} (row ${r.rec.row}): no product with ${idRef !== undefined ? `ID ${idRef}` : `SKU ${JSON.stringify(ref)}`} in the file`
          : `${cols.role.parent ?? 'Parent'} (row ${r.rec.row}): a variation needs its parent's SKU or id:ID`,
      );
  }

  // SKUs given in the file are claimed before any is derived
  const taken = given ?? skusOfRows(rows);
  const carried = carriedBy(cols);

  const firstRow = new Map<number, { group: Group } | ParsedProduct>();
  for (const g of groups) firstRow.set(g.parent.rec.row, { group: g });
  for (const [r, message] of orphans)
    firstRow.set(r.rec.row, { rows: [r.rec.row], sku: toSku(r.role('sku')) || null, body: null, errors: [message] });
  for (const item of out) firstRow.set(item.rows[0], item);

  return [...firstRow.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, item]) => {
      if (!('group' in item)) return item;
      const g = item.group;
      g.variations.sort((a, b) => a.rec.row - b.rec.row);
      const problems = new Problems();
      const body = build(g, cols, taken, problems);
      const rowNumbers = [g.parent.rec.row, ...g.variations.map((v) => v.rec.row)].sort((a, b) => a - b);
      const sku = typeof body.sku === 'string' ? body.sku : null;
      return problems.list.length
        ? { rows: rowNumbers, sku, body: null, errors: problems.list }
        : { rows: rowNumbers, sku, body, errors: [], carried };
    });
}

// ---------------------------------------------------------------------------------------------
// writing
// ---------------------------------------------------------------------------------------------

const published = (s: unknown) => (s === 'active' ? '1' : s === 'disabled' ? '0' : '-1');
const money = (price: number | undefined, compareAt: number | undefined) =>
  compareAt !== undefined
    ? { 'Sale price': formatNumber(price), 'Regular price': formatNumber(compareAt) }
    : { 'Sale price': '', 'Regular price': formatNumber(price) };

type Shipping =
  | {
      weight?: number;
      weightUnit?: string;
      dimensions?: { length?: number; width?: number; height?: number; unit?: string };
      requiresShipping?: boolean;
      shippingClass?: string;
    }
  | undefined;

function shippingCells(s: Shipping): Record<string, string> {
  const d = s?.dimensions;
  const inch = (n: number | undefined) =>
    n === undefined ? '' : formatNumber(roundMeasure(n * (ownEntry(TO_IN, d?.unit ?? 'in') ?? 1)));
  return {
    'Weight (lbs)':
      s?.weight === undefined
        ? ''
        : formatNumber(roundMeasure(s.weight * (ownEntry(TO_LB, s.weightUnit ?? 'lb') ?? 1))),
    'Length (in)': inch(d?.length),
    'Width (in)': inch(d?.width),
    'Height (in)': inch(d?.height),
    'Shipping class': s?.shippingClass ?? '',
  };
}

/**
 * The flags of a Type cell: `virtual` for no shipping, `downloadable` for a digital product (one
 * that is virtual only when it has downloads). Every other product type has no flag.
 */
function typeFlags(item: { productType?: string; shipping?: Shipping }, hasDownloads: boolean): string[] {
  const virtual = item.shipping?.requiresShipping === false;
  const downloadable = item.productType === 'digital' && (hasDownloads || !virtual);
  return [...(downloadable ? ['downloadable'] : []), ...(virtual ? ['virtual'] : [])];
}

function typeCell(kind: string, item: { productType?: string; shipping?: Shipping }, hasDownloads: boolean): string {
  return [kind, ...typeFlags(item, hasDownloads)].join(', ');
}

function metafield(p: PresentedProduct, key: string): unknown {
  return (p.metafields ?? []).find((m: { namespace?: string; key: string }) => m.namespace === NS && m.key === key)
    ?.value;
}

/** The downloads a product keeps in its `woocommerce` metafield. */
function downloadsOf(p: PresentedProduct): { name?: string; url?: string }[] {
  const downloads = metafield(p, 'downloads');
  return Array.isArray(downloads) ? (downloads as { name?: string; url?: string }[]) : [];
}

function toRecords(p: PresentedProduct): Record<string, string>[] {
  const blank = (): Record<string, string> => Object.fromEntries(woocommerceColumns(...repeats(p)).map((c) => [c, '']));
  const media = [...(p.media ?? [])].sort((a, b) => (a.position ?? 0) - (b.position ?? 0));
  const variants: Record<string, any>[] = p.variants ?? [];
  const options: { id?: string; name: string; values: string[] }[] = p.options ?? [];
  const hasVariants = variants.length > 0 || (p.options ?? []).length > 0;
  const grouped = metafield(p, 'grouped_products');
  const externalUrl = metafield(p, 'external_url');
  const downloadList = downloadsOf(p);
  const kind = hasVariants
    ? 'variable'
    : Array.isArray(grouped)
      ? 'grouped'
      : typeof externalUrl === 'string'
        ? 'external'
        : 'simple';

  const parent = blank();
  Object.assign(parent, {
    Type: typeCell(kind, p, downloadList.length > 0),
    SKU: p.sku,
    Name: p.title?.value ?? '',
    Published: published(p.status),
    'Short description': encodeWooText(p.description?.value ?? ''),
    Description: encodeWooText(p.htmlDescription?.value ?? ''),
    'Tax status': p.taxable === false ? 'none' : 'taxable',
    'Backorders allowed?': p.sellIfOutOfStock ? '1' : '0',
    ...shippingCells(p.shipping),
    ...money(p.price, p.compareAtPrice),
    Categories: joinWooList([
      ...(p.category?.path ? [p.category.path] : []),
      ...(p.categoryMap ?? [])
        .filter((c: { domain: string }) => c.domain === NS)
        .map((c: { value: string }) => c.value),
    ]),
    Tags: joinWooList(p.tags ?? []),
    Images: joinWooList(media.map((m) => m.src)),
    'Grouped products': Array.isArray(grouped) ? joinWooList(grouped.map(String)) : '',
    'External URL': typeof externalUrl === 'string' ? externalUrl : '',
    'Button text': String(metafield(p, 'button_text') ?? ''),
  });
  if (hasVariants) {
    options.forEach((o, k) => {
      parent[`Attribute ${k + 1} name`] = o.name;
      parent[`Attribute ${k + 1} value(s)`] = joinWooList(o.values ?? []);
      parent[`Attribute ${k + 1} visible`] = '1';
      parent[`Attribute ${k + 1} global`] = '0';
    });
  } else {
    const byName = new Map<string, string[]>();
    for (const a of p.attributes ?? []) byName.set(a.name, [...(byName.get(a.name) ?? []), String(a.value)]);
    [...byName].forEach(([name, values], k) => {
      parent[`Attribute ${k + 1} name`] = name;
      parent[`Attribute ${k + 1} value(s)`] = joinWooList(values);
      parent[`Attribute ${k + 1} visible`] = '1';
      parent[`Attribute ${k + 1} global`] = '0';
    });
  }
  downloadList.forEach((d, k) => {
    parent[`Download ${k + 1} name`] = d.name ?? '';
    parent[`Download ${k + 1} URL`] = d.url ?? '';
  });

  const rows = [parent];
  for (const v of variants) {
    const r = blank();
    const image = v.imageId ? media.find((m) => m.id === v.imageId)?.src : undefined;
    Object.assign(r, {
      Type: typeCell('variation', v, false),
      SKU: v.sku,
      Name: v.title?.value ?? '',
      Published: published(p.status),
      'Tax status': v.taxable === false ? 'none' : 'taxable',
      'Backorders allowed?': v.sellIfOutOfStock ? '1' : '0',
      ...shippingCells(v.shipping),
      ...money(v.price, v.compareAtPrice),
      Images: image ? joinWooList([image]) : '',
      Parent: p.sku,
      Position: formatNumber(v.position ?? 0),
    });
    options.forEach((o, k) => {
      r[`Attribute ${k + 1} name`] = o.name;
      const value = (v.options ?? []).find((vo: { id: string; name: string }) =>
        o.id ? vo.id === o.id : vo.name === o.name,
      )?.value;
      r[`Attribute ${k + 1} value(s)`] = value === undefined ? '' : joinWooList([value]);
      r[`Attribute ${k + 1} global`] = '0';
    });
    rows.push(r);
  }
  return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, prefixFormula(v)])));
}

export const woocommerceLayout: Layout = {
  format: 'woocommerce',
  columns: WOOCOMMERCE_COLUMNS,
  lossyCells: {
    product: (p) => typeFlags(p, downloadsOf(p).length > 0).join(),
    variant: (v) => typeFlags(v, false).join(),
  },
  repeated: {
    reads: ['options', 'variants', 'attributes', 'metafields'],
    widths: repeats,
    columns: (widths) => woocommerceColumns(Math.max(3, widths[0] ?? 0), Math.max(2, widths[1] ?? 0)),
  },
  parse,
  keyColumns,
  givenSkus,
  toRecords,
};
