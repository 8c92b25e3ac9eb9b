import type { Carried, CsvRecord, Layout, ParsedProduct, PresentedProduct } from '../layout';
import {
  columnsOf,
  cell,
  claimSku,
  compact,
  fingerprint,
  formatNumber,
  GRAMS_PER,
  mediaId,
  mediaName,
  mediaSrc,
  optionId,
  ownEntry,
  parseBool,
  parseCategoryPath,
  parseIndex,
  parseMoney,
  parseMeasure,
  Problems,
  CellError,
  carriedPaths,
  roundMeasure,
  slugify,
  splitTags,
  toSku,
  deriveSku,
  unique,
} from './values';

/**
 * Shopify's product CSV, read the way Shopify's importer reads it and written as its admin export.
 *
 * Reading accepts the three header generations: the 2019 template, the 2021 admin export (the
 * same names plus Status) and the 2024 names ("Title,URL handle,Description,…,SKU,Option1 name,
 * Price,Compare-at price,…"); names are matched case-insensitively.
 *
 * - Rows with the same Handle (or "URL handle") are one product, adjacent or not. A row with no
 *   handle but a Title gets the handle Shopify would generate from the title.
 * - Product fields (Title, Body, Vendor, Type, Tags, Status, SEO, …) come from the first row of the
 *   handle that fills them; option names from the first row that names them.
 * - A variant row has an option value, a SKU or a price; other rows of the handle only add images.
 * - One variant row whose option is "Title / Default Title" (or that has no option at all) is a
 *   product without variants: its SKU is the Variant SKU, else the handle upper-cased. Otherwise
 *   every variant row is a variant (SKU: Variant SKU, else handle + option values), the product's
 *   SKU is the handle upper-cased and its price the lowest variant price.
 * - Status active/draft/archived → active/draft/disabled; without Status, Published TRUE → active,
 *   FALSE → draft. Variant Grams → shipping {weight, weightUnit: 'g'} (Variant Weight Unit is a
 *   display unit only). A compare-at price is kept only when above the price.
 * - SEO Title/Description go to seo when within the product schema's limits (60 / 160); Shopify
 *   allows 70 / 320, so a longer one is kept whole as the metafield Shopify itself stores it in
 *   (global.title_tag / global.description_tag) instead of failing the row.
 * - Requires shipping FALSE on every variant makes a digital product; requiresShipping is stored
 *   only where it departs from what the product type implies.
 * - Product Category (2022+) → category {name, path}; Google Shopping / Google Product Category →
 *   categoryMap {domain: 'google'}.
 * - The handle becomes seo.slug, unless it is just the product SKU in handle form.
 *
 * Writing uses the 2021 export names, plus "Product Category" (the column Shopify's export added
 * after Vendor in 2022) and one metafield column, "Product SKU (product.metafields.custom.sku)",
 * which carries the product SKU of a product with variants (Shopify has no product-level SKU).
 */

export const SHOPIFY_PRODUCT_SKU_COLUMN = 'Product SKU (product.metafields.custom.sku)';

export const SHOPIFY_COLUMNS = [
  'Handle',
  'Title',
  'Body (HTML)',
  'Vendor',
  'Product Category',
  'Type',
  'Tags',
  'Published',
  'Option1 Name',
  'Option1 Value',
  'Option2 Name',
  'Option2 Value',
  'Option3 Name',
  'Option3 Value',
  'Variant SKU',
  'Variant Grams',
  'Variant Inventory Tracker',
  'Variant Inventory Qty',
  'Variant Inventory Policy',
  'Variant Fulfillment Service',
  'Variant Price',
  'Variant Compare At Price',
  'Variant Requires Shipping',
  'Variant Taxable',
  'Variant Barcode',
  'Image Src',
  'Image Position',
  'Image Alt Text',
  'Gift Card',
  'SEO Title',
  'SEO Description',
  'Google Shopping / Google Product Category',
  'Google Shopping / Gender',
  'Google Shopping / Age Group',
  'Google Shopping / MPN',
  'Google Shopping / AdWords Grouping',
  'Google Shopping / AdWords Labels',
  'Google Shopping / Condition',
  'Google Shopping / Custom Product',
  'Google Shopping / Custom Label 0',
  'Google Shopping / Custom Label 1',
  'Google Shopping / Custom Label 2',
  'Google Shopping / Custom Label 3',
  'Google Shopping / Custom Label 4',
  'Variant Image',
  'Variant Weight Unit',
  'Variant Tax Code',
  'Cost per item',
  'Status',
  SHOPIFY_PRODUCT_SKU_COLUMN,
];

/** The columns read, by role, with every generation's name (compared lower-case). */
const ALIASES = {
  handle: ['Handle', 'URL handle'],
  title: ['Title'],
  body: ['Body (HTML)', 'Description'],
  vendor: ['Vendor'],
  category: ['Product Category'],
  type: ['Type'],
  tags: ['Tags'],
  published: ['Published', 'Published on online store'],
  status: ['Status'],
  option1Name: ['Option1 Name'],
  option1Value: ['Option1 Value'],
  option2Name: ['Option2 Name'],
  option2Value: ['Option2 Value'],
  option3Name: ['Option3 Name'],
  option3Value: ['Option3 Value'],
  sku: ['Variant SKU', 'SKU'],
  grams: ['Variant Grams', 'Weight value (grams)'],
  policy: ['Variant Inventory Policy', 'Continue selling when out of stock'],
  price: ['Variant Price', 'Price'],
  compareAt: ['Variant Compare At Price', 'Compare-at price'],
  requiresShipping: ['Variant Requires Shipping', 'Requires shipping'],
  taxable: ['Variant Taxable', 'Charge tax'],
  barcode: ['Variant Barcode', 'Barcode'],
  imageSrc: ['Image Src', 'Product image URL'],
  imagePosition: ['Image Position', 'Image position'],
  imageAlt: ['Image Alt Text', 'Image alt text'],
  variantImage: ['Variant Image', 'Variant image URL'],
  seoTitle: ['SEO Title'],
  seoDescription: ['SEO Description'],
  googleCategory: ['Google Shopping / Google Product Category'],
  cost: ['Cost per item'],
  productSku: [SHOPIFY_PRODUCT_SKU_COLUMN],
} as const;
type Role = keyof typeof ALIASES;
type Columns = Partial<Record<Role, string>>;

const SEO_TITLE_MAX = 60;
const SEO_DESCRIPTION_MAX = 160;
const SEO_METAFIELDS = {
  title: { namespace: 'global', key: 'title_tag' },
  description: { namespace: 'global', key: 'description_tag' },
} as const;

/** The header names of these records, by role. */
function resolveColumns(names: Iterable<string>): Columns {
  const byLower = new Map<string, string>();
  for (const name of names) if (!byLower.has(name.trim().toLowerCase())) byLower.set(name.trim().toLowerCase(), name);
  const cols: Columns = {};
  for (const role of Object.keys(ALIASES) as Role[]) {
    for (const alias of ALIASES[role]) {
      const name = byLower.get(alias.toLowerCase());
      if (name !== undefined) {
        cols[role] = name;
        break;
      }
    }
  }
  return cols;
}

/**
 * What a file carries, by the columns its header has (shared/csv/merge.ts): a product, variant
 * or image the file updates keeps the stored parts these do not name. The commerce columns are
 * a variant's, or a product's without variants. A price carries the compare-at price with it:
 * the layout keeps a compare-at price only above the price, so the two are decided together.
 */
const PRODUCT_PATHS: [Role, string[]][] = [
  ['title', ['title.value']],
  ['body', ['htmlDescription.value']],
  ['vendor', ['brand']],
  ['category', ['category.name', 'category.path']],
  ['type', ['productKind']],
  ['tags', ['tags']],
  ['status', ['status']],
  ['published', ['status']],
  ['seoTitle', ['seo.metaTitle']],
  ['seoDescription', ['seo.metaDescription']],
  ['googleCategory', ['categoryMap']],
];
const COMMERCE_PATHS: [Role, string[]][] = [
  ['price', ['price', 'compareAtPrice']],
  ['compareAt', ['compareAtPrice']],
  ['cost', ['cost']],
  ['barcode', ['barcode']],
  ['taxable', ['taxable']],
  ['policy', ['sellIfOutOfStock']],
  ['grams', ['shipping.weight', 'shipping.weightUnit']],
  ['requiresShipping', ['shipping.requiresShipping']],
];
const VARIANT_PATHS: [Role, string[]][] = [
  ['option1Value', ['options']],
  ['variantImage', ['imageId']],
];

/** The product type, read from Requires shipping (FALSE on every row: digital). */
const TYPE_PATHS: [Role, string[]][] = [['requiresShipping', ['productType']]];

function carriedBy(cols: Columns): Carried {
  const present = (table: [Role, string[]][]) => table.flatMap(([role, paths]) => (cols[role] ? paths : []));
  return carriedPaths({
    // the handle is always read: it is the slug unless it is the SKU in handle form
    product: ['sku', 'seo.slug', ...present(PRODUCT_PATHS), ...present(COMMERCE_PATHS), ...present(TYPE_PATHS)],
    // a variant's position is its row's place among the handle's variant rows
    variant: ['sku', 'position', ...present(VARIANT_PATHS), ...present(COMMERCE_PATHS)],
    // media ids and names are made up (img-1, the URL's file name): a stored image keeps its own
    media: ['src', 'position', ...(cols.imageAlt ? ['alt.value'] : [])],
    // Shopify has no variant title: the layout makes one of the option values
    fromOptions: ['title.value'],
    // the commerce columns of a product without variants are its one row's, as a variant's
    cleared: [...present(COMMERCE_PATHS), ...present(TYPE_PATHS)],
    // the product type is written as Requires shipping (lossyCells)
    lossy: { format: 'shopify', paths: ['productType', 'shipping.requiresShipping'] },
    positionsFromOrder: true,
  });
}

/**
 * What the rows of a product with variants carry: its commerce columns are its variants', so a
 * blank there clears nothing of the product's own (which its export does not write).
 */
function withVariants(carried: Carried): Carried {
  const commerce = new Set(COMMERCE_PATHS.flatMap(([, paths]) => paths));
  return { ...carried, cleared: carried.cleared?.filter((path) => !commerce.has(path.join('.'))) };
}

/** The label of a column in messages: its header name and the row. */
const label = (cols: Columns, role: Role, row: number) => `${cols[role] ?? ALIASES[role][0]} (row ${row})`;

function parseStatus(text: string): 'active' | 'draft' | 'disabled' | undefined {
  const t = text.trim().toLowerCase();
  if (t === '') return undefined;
  if (t === 'active') return 'active';
  if (t === 'draft') return 'draft';
  if (t === 'archived') return 'disabled';
  throw new CellError(`is not active, draft or archived: ${JSON.stringify(text)}`);
}

/** deny → false, continue → true (also TRUE/FALSE, for "Continue selling when out of stock"). */
function parsePolicy(text: string): boolean | undefined {
  const t = text.trim().toLowerCase();
  if (t === '') return undefined;
  if (t === 'deny') return false;
  if (t === 'continue') return true;
  try {
    return parseBool(t);
  } catch {
    throw new CellError(`is not deny or continue: ${JSON.stringify(text)}`);
  }
}

interface Row {
  rec: CsvRecord;
  get(role: Role): string;
}

const VARIANT_ROLES: Role[] = ['option1Value', 'option2Value', 'option3Value', 'sku', 'price'];

/** Shopify's default option: one variant whose only option is "Title: Default Title". */
function isDefaultTitle(r: Row): boolean {
  const name = r.get('option1Name').toLowerCase();
  const value = r.get('option1Value').toLowerCase();
  return (
    value === 'default title' && (name === '' || name === 'title') && !r.get('option2Value') && !r.get('option3Value')
  );
}

function parseGroup(handle: string, rows: Row[], cols: Columns, taken: Set<string>, carried: Carried): ParsedProduct {
  const problems = new Problems();
  const rowNumbers = rows.map((r) => r.rec.row).sort((a, b) => a - b);
  const first = (role: Role): string => {
    for (const r of rows) {
      const v = r.get(role);
      if (v !== '') return v;
    }
    return '';
  };
  const firstRow = (role: Role): Row | undefined => rows.find((r) => r.get(role) !== '');
  const read = <T>(r: Row, role: Role, fn: (text: string) => T): T | undefined =>
    problems.read(label(cols, role, r.rec.row), () => fn(r.get(role)));
  const readFirst = <T>(role: Role, fn: (text: string) => T): T | undefined => {
    const r = firstRow(role);
    return r ? read(r, role, fn) : undefined;
  };

  const title = first('title');
  if (!title) problems.add(`${cols.title ?? 'Title'}: no row of handle ${JSON.stringify(handle)} has a title`);

  const variantRows = rows.filter((r) => VARIANT_ROLES.some((role) => r.get(role) !== ''));
  if (!variantRows.length)
    problems.add(`handle ${JSON.stringify(handle)}: no variant row (a row with an option value, a SKU or a price)`);
  // One variant row without options is a product without variants, as Shopify reads it, unless
  // the Product SKU column names another SKU than the row's: that is how the export writes a
  // product with one variant that has no options.
  const productSkuCell = toSku(first('productSku'));
  const simple =
    variantRows.length === 1 &&
    (isDefaultTitle(variantRows[0]) ||
      (VARIANT_ROLES.slice(0, 3).every((role) => variantRows[0].get(role) === '') &&
        (!productSkuCell || !variantRows[0].get('sku') || productSkuCell === toSku(variantRows[0].get('sku')))));

  // --- media: image rows and variant images, in Image Position order
  const media: { src: string; position?: number; alt: string; order: number }[] = [];
  const seen = new Map<string, (typeof media)[number]>();
  rows.forEach((r, order) => {
    if (!r.get('imageSrc')) return;
    const src = read(r, 'imageSrc', mediaSrc);
    if (src === undefined) return;
    const position = read(r, 'imagePosition', parseIndex);
    if (seen.has(src)) return;
    const m = {
      src,
      position: position !== undefined && position > 0 ? position - 1 : undefined,
      alt: r.get('imageAlt'),
      order,
    };
    seen.set(src, m);
    media.push(m);
  });
  const variantImageSrc = new Map<Row, string>();
  for (const r of variantRows) {
    if (!r.get('variantImage')) continue;
    const src = read(r, 'variantImage', mediaSrc);
    if (src === undefined) continue;
    variantImageSrc.set(r, src);
    if (!seen.has(src)) {
      const m = { src, position: undefined, alt: '', order: media.length + rows.length };
      seen.set(src, m);
      media.push(m);
    }
  }
  let next = Math.max(-1, ...media.map((m) => m.position ?? -1)) + 1;
  for (const m of media) if (m.position === undefined) m.position = next++;
  media.sort((a, b) => a.position! - b.position! || a.order - b.order);
  const mediaBody = media.map((m, i) => ({
    id: mediaId(i),
    src: m.src,
    name: mediaName(m.src, i + 1),
    position: m.position!,
    alt: { value: m.alt },
  }));
  const mediaIdOf = (src: string) => mediaBody.find((m) => m.src === src)?.id;

  // --- per-row commerce fields
  const money = (r: Row, role: Role) => read(r, role, parseMoney);
  const requiresShipping = (r: Row) => read(r, 'requiresShipping', parseBool);
  const digital = variantRows.length > 0 && variantRows.every((r) => requiresShipping(r) === false);
  const impliedShipping = !digital;
  const shippingOf = (r: Row) => {
    const weight = read(r, 'grams', parseMeasure);
    const rs = requiresShipping(r);
    const s = compact({
      weight,
      weightUnit: weight !== undefined ? ('g' as const) : undefined,
      requiresShipping: rs !== undefined && rs !== impliedShipping ? rs : undefined,
    });
    return Object.keys(s).length ? s : undefined;
  };
  const pricing = (r: Row) => {
    const price = money(r, 'price') ?? 0;
    const compareAt = money(r, 'compareAt');
    return { price, compareAtPrice: compareAt !== undefined && compareAt > price ? compareAt : undefined };
  };
  const commerce = (r: Row) =>
    compact({
      ...pricing(r),
      cost: money(r, 'cost'),
      barcode: r.get('barcode') || undefined,
      taxable: read(r, 'taxable', parseBool),
      sellIfOutOfStock: read(r, 'policy', parsePolicy),
      shipping: shippingOf(r),
    });

  // --- the product SKU
  const skuColumn = productSkuCell;
  const handleSku = toSku(handle);
  let sku: string;
  const body: Record<string, unknown> = {};
  if (simple) {
    const vr = variantRows[0];
    sku = skuColumn || toSku(vr.get('sku')) || claimSku(handleSku, taken);
    Object.assign(body, commerce(vr));
  } else {
    // options: names from the first row naming them, values in variant order
    const options: { id: string; name: string; values: string[]; column: 1 | 2 | 3 }[] = [];
    for (const n of [1, 2, 3] as const) {
      const nameRole = `option${n}Name` as Role;
      const valueRole = `option${n}Value` as Role;
      const values = unique(variantRows.map((r) => r.get(valueRole)).filter((v) => v !== ''));
      const name = first(nameRole);
      if (!name) {
        if (values.length)
          problems.add(
            `${cols[nameRole] ?? `Option${n} Name`}: handle ${JSON.stringify(handle)} has Option${n} values but no row names the option`,
          );
        continue;
      }
      options.push({ id: optionId(options.length), name, values, column: n });
    }
    // variant SKUs: given ones first, then derived ones that avoid them
    const given = variantRows.map((r) => toSku(r.get('sku')));
    for (const s of given) if (s) taken.add(s);
    const variants = variantRows.map((r, i) => {
      const opts = options.flatMap((o) => {
        const value = r.get(`option${o.column}Value` as Role);
        return value ? [{ id: o.id, name: o.name, value }] : [];
      });
      const variantSku =
        given[i] || claimSku(deriveSku(handle, ...opts.map((o) => o.value)) || `${handleSku}-${i + 1}`, taken);
      const src = variantImageSrc.get(r);
      return compact({
        sku: variantSku,
        title: { value: opts.map((o) => o.value).join(' / ') || 'Default Title' },
        ...commerce(r),
        position: i,
        options: opts,
        imageId: src ? mediaIdOf(src) : undefined,
      });
    });
    const variantSkus = new Set(variants.map((v) => v.sku));
    sku = skuColumn || claimSku(variantSkus.has(handleSku) ? `${handleSku}-PRODUCT` : handleSku, taken);
    body.price = variants.length ? Math.min(...variants.map((v) => v.price)) : 0;
    body.options = options.map(({ id, name, values }) => ({ id, name, values }));
    body.variants = variants;
  }

  // --- product fields
  const seo: Record<string, string> = {};
  const metafields: { namespace: string; key: string; type: string; value: string }[] = [];
  const seoTitle = first('seoTitle');
  if (seoTitle) {
    if (seoTitle.length <= SEO_TITLE_MAX) seo.metaTitle = seoTitle;
    else metafields.push({ ...SEO_METAFIELDS.title, type: 'string', value: seoTitle });
  }
  const seoDescription = first('seoDescription');
  if (seoDescription) {
    if (seoDescription.length <= SEO_DESCRIPTION_MAX) seo.metaDescription = seoDescription;
    else metafields.push({ ...SEO_METAFIELDS.description, type: 'string', value: seoDescription });
  }
  const slug = handle.toLowerCase();
  if (/^[a-z0-9-]+$/.test(slug) && slug.length <= 200 && slug !== handleOf(sku)) seo.slug = slug;

  const statusText = first('status');
  const status = statusText
    ? readFirst('status', parseStatus)
    : readFirst('published', (t) => {
        const b = parseBool(t);
        return b === undefined ? undefined : b ? ('active' as const) : ('draft' as const);
      });
  const category = parseCategoryPath(first('category'));
  const google = first('googleCategory');
  const tags = splitTags(first('tags'));
  const bodyHtml = rows.map((r) => r.rec.values[cols.body ?? ''] ?? '').find((v) => v.trim() !== '');

  const product = compact({
    sku,
    title: { value: title },
    status,
    productType: digital ? ('digital' as const) : undefined,
    htmlDescription: bodyHtml !== undefined ? { value: bodyHtml } : undefined,
    brand: first('vendor') || undefined,
    productKind: first('type') || undefined,
    tags: tags.length ? tags : undefined,
    category,
    categoryMap: google ? [{ domain: 'google', value: google }] : undefined,
    seo: Object.keys(seo).length ? seo : undefined,
    metafields: metafields.length ? metafields : undefined,
    media: mediaBody.length ? mediaBody : undefined,
    ...body,
  });

  if (problems.list.length) return { rows: rowNumbers, sku, body: null, errors: problems.list };
  return { rows: rowNumbers, sku, body: product, errors: [], carried: simple ? carried : withVariants(carried) };
}

/** The handle a product is exported under when it has no seo.slug: its SKU in handle form. */
function handleOf(sku: string): string {
  return slugify(sku) || fingerprint(sku).toLowerCase();
}

function parse(records: CsvRecord[], given?: Set<string>): ParsedProduct[] {
  const cols = resolveColumns(columnsOf(records));
  const groups = new Map<string, { handle: string; rows: Row[] }>();
  const out: (ParsedProduct | { group: string })[] = [];
  // Rows of one handle are one product, unless the Product SKU column (which the export writes
  // on each product's first row) names two products under one handle: a slug may be another
  // product's SKU in handle form. A row that names no product SKU joins the product its handle
  // last named (the export writes a product's rows together).
  const named = new Map<string, string>(); // handle → the group its rows last named
  const keyOf = new Map<string, string>(); // handle and product SKU → its group
  const groupKey = (handle: string, productSku: string) => {
    if (!productSku) return named.get(handle) ?? handle;
    const id = `${handle}\n${productSku}`;
    let key = keyOf.get(id);
    if (key === undefined) {
      key = named.has(handle) ? id : handle; // the first product named under a handle keeps its group
      keyOf.set(id, key);
    }
    named.set(handle, key);
    return key;
  };
  for (const rec of records) {
    if (Object.values(rec.values).every((v) => typeof v !== 'string' || v.trim() === '')) continue; // a row of empty cells makes nothing
    const row: Row = { rec, get: (role) => cell(rec.values, cols[role]) };
    let handle = row.get('handle');
    if (!handle && row.get('title')) handle = slugify(row.get('title'));
    if (!handle) {
      out.push({
        rows: [rec.row],
        // its Variant SKU: the product it belongs to keeps that stored variant (shared/csv/merge.ts)
        sku: toSku(row.get('sku')) || null,
        body: null,
        errors: [`${label(cols, 'handle', rec.row)}: required (the handle names the product a row belongs to)`],
      });
      continue;
    }
    const key = groupKey(handle.toLowerCase(), toSku(row.get('productSku')));
    let group = groups.get(key);
    if (!group) {
      group = { handle, rows: [] };
      groups.set(key, group);
      out.push({ group: key });
    }
    group.rows.push(row);
  }
  // SKUs given in the file are claimed before any is derived, so a derived SKU never takes one
  const taken = given ?? givenSkus(records);
  const carried = carriedBy(cols);
  return out.map((item) =>
    'group' in item
      ? parseGroup(groups.get(item.group)!.handle, groups.get(item.group)!.rows, cols, taken, carried)
      : item,
  );
}

/** The SKUs the records give in the SKU columns (variant and product). */
function givenSkus(records: CsvRecord[]): Set<string> {
  const cols = resolveColumns(columnsOf(records));
  const taken = new Set<string>();
  for (const rec of records) {
    for (const role of ['sku', 'productSku'] as const) {
      const s = toSku(cell(rec.values, cols[role]));
      if (s) taken.add(s);
    }
  }
  return taken;
}

/** Grouping reads the handle (or the title it falls back to) and the SKU columns. */
function keyColumns(header: string[]): string[] {
  const cols = resolveColumns(header);
  return (['handle', 'title', 'sku', 'productSku'] as const).flatMap((role) => (cols[role] ? [cols[role]] : []));
}

// ---------------------------------------------------------------------------------------------
// writing
// ---------------------------------------------------------------------------------------------

const bool = (b: boolean | undefined) => (b === undefined ? '' : b ? 'TRUE' : 'FALSE');
const statusCell = (s: unknown) => (s === 'disabled' ? 'archived' : s === 'active' ? 'active' : 'draft');
type Shipping = { weight?: number; weightUnit?: string; requiresShipping?: boolean } | undefined;
function gramsOf(s: Shipping): string {
  if (!s || s.weight === undefined) return '';
  return formatNumber(roundMeasure(s.weight * (ownEntry(GRAMS_PER, s.weightUnit ?? 'g') ?? 1)));
}

/** Whether a product type ships (Requires shipping TRUE): physical, bundle, supply, material, or none. */
const SHIPPED_TYPES = [undefined, 'physical', 'bundle', 'supply', 'material'];

/**
 * The Requires shipping cell of a variant's row, or (no variant) of the one row of a product
 * without variants: its own requiresShipping, else the product's, else what the type implies.
 */
function requiresShippingCell(p: Record<string, any>, v?: Record<string, any>): string {
  const rs = v?.shipping?.requiresShipping ?? p.shipping?.requiresShipping ?? SHIPPED_TYPES.includes(p.productType);
  return bool(rs);
}

/** The Requires shipping cells of a product's rows (which decide its type: FALSE on all is digital). */
function requiresShippingCells(p: Record<string, any>): string {
  const variants: Record<string, any>[] = Array.isArray(p.variants) ? p.variants : [];
  if (!variants.length) return requiresShippingCell(p);
  return variants
    .map((v) => requiresShippingCell(p, v))
    .sort()
    .join(',');
}

function metafieldValue(p: PresentedProduct, ns: { namespace: string; key: string }): string | undefined {
  const m = (p.metafields ?? []).find(
    (f: { namespace?: string; key: string }) => f.namespace === ns.namespace && f.key === ns.key,
  );
  return m && typeof m.value === 'string' ? m.value : undefined;
}

function toRecords(p: PresentedProduct): Record<string, string>[] {
  const blank = (): Record<string, string> => Object.fromEntries(SHOPIFY_COLUMNS.map((c) => [c, '']));
  const handle: string = p.seo?.slug ?? handleOf(String(p.sku));
  const media = [...(p.media ?? [])].sort((a, b) => (a.position ?? 0) - (b.position ?? 0));
  const srcOf = (imageId: string | undefined) => (imageId ? (media.find((m) => m.id === imageId)?.src ?? '') : '');
  const commerceCells = (src: Record<string, any>, own: Shipping) => {
    return {
      'Variant Grams': gramsOf(own),
      'Variant Weight Unit': own?.weight !== undefined ? (own.weightUnit ?? 'g') : '',
      'Variant Inventory Policy': src.sellIfOutOfStock ? 'continue' : 'deny',
      'Variant Fulfillment Service': 'manual',
      'Variant Price': formatNumber(src.price ?? 0),
      'Variant Compare At Price': formatNumber(src.compareAtPrice),
      'Variant Requires Shipping': requiresShippingCell(p, src === p ? undefined : src),
      'Variant Taxable': bool(src.taxable ?? true),
      'Variant Barcode': src.barcode ?? '',
      'Cost per item': formatNumber(src.cost),
    };
  };

  const options: { id?: string; name: string }[] = (p.options ?? []).slice(0, 3);
  const variants: Record<string, any>[] = [...(p.variants ?? [])].sort((a, b) => (a.position ?? 0) - (b.position ?? 0));
  const variantRows: Record<string, string>[] = [];
  if (!variants.length) {
    variantRows.push({
      'Option1 Name': 'Title',
      'Option1 Value': 'Default Title',
      'Variant SKU': p.sku,
      ...commerceCells(p, p.shipping),
    });
  } else {
    variants.forEach((v, i) => {
      const cells: Record<string, string> = {
        'Variant SKU': v.sku,
        'Variant Image': srcOf(v.imageId),
        ...commerceCells(v, v.shipping),
      };
      options.forEach((o, k) => {
        if (i === 0) cells[`Option${k + 1} Name`] = o.name;
        cells[`Option${k + 1} Value`] =
          (v.options ?? []).find((vo: { id: string; name: string }) => (o.id ? vo.id === o.id : vo.name === o.name))
            ?.value ?? '';
      });
      variantRows.push(cells);
    });
  }

  const rows: Record<string, string>[] = [];
  const n = Math.max(variantRows.length, media.length, 1);
  for (let i = 0; i < n; i++) {
    const r = blank();
    r.Handle = handle;
    if (i === 0) {
      const google = (p.categoryMap ?? []).find((c: { domain: string }) => c.domain === 'google');
      Object.assign(r, {
        Title: p.title?.value ?? '',
        'Body (HTML)': p.htmlDescription?.value ?? '',
        Vendor: p.brand ?? '',
        'Product Category': p.category?.path ?? '',
        Type: p.productKind ?? '',
        Tags: (p.tags ?? []).join(', '),
        Published: bool(p.status === 'active'),
        'Gift Card': 'FALSE',
        'SEO Title': p.seo?.metaTitle ?? metafieldValue(p, SEO_METAFIELDS.title) ?? '',
        'SEO Description': p.seo?.metaDescription ?? metafieldValue(p, SEO_METAFIELDS.description) ?? '',
        'Google Shopping / Google Product Category': google?.value ?? '',
        Status: statusCell(p.status),
        [SHOPIFY_PRODUCT_SKU_COLUMN]: p.sku,
      });
    }
    if (i < variantRows.length) Object.assign(r, variantRows[i]);
    if (i < media.length) {
      r['Image Src'] = media[i].src;
      r['Image Position'] = formatNumber((media[i].position ?? i) + 1);
      r['Image Alt Text'] = media[i].alt?.value ?? '';
    }
    rows.push(r);
  }
  return rows;
}

export const shopifyLayout: Layout = {
  format: 'shopify',
  columns: SHOPIFY_COLUMNS,
  lossyCells: { product: requiresShippingCells, variant: (v, p) => requiresShippingCell(p, v) },
  parse,
  keyColumns,
  givenSkus,
  toRecords,
};
