/**
 * A CSV layout turns parsed CSV records into product bodies (the same JSON a client sends to
 * POST /products) and products back into records. One definition per format serves import,
 * export, templates and previews.
 */

/** One parsed record: `row` is its spreadsheet row number (the header is row 1, the first record row 2). */
export interface CsvRecord {
  row: number;
  values: Record<string, string>;
}

/** The product one or more records describe, or why they do not describe one. */
export interface ParsedProduct {
  /** Rows that made this product, ascending. */
  rows: number[];
  /** The product SKU (upper-case) when the rows give one, for error reports. */
  sku: string | null;
  /** A body for the catalog (validated there like any POST /products body); null when `errors` is not empty. */
  body: Record<string, unknown> | null;
  /** Problems that stop these rows from making a product (each names the column). */
  errors: string[];
  /**
   * The parts of a product (and of each variant) the file's columns carry, as paths, where one
   * field is made of several columns (`title` and `title.translations`, `seo.metaTitle`): an
   * update writes only these, so a sibling column the file leaves out keeps its stored value.
   * Without it, each top-level field the body holds is replaced whole. The merge is
   * shared/csv/merge.ts.
   */
  carried?: Carried;
}

/** What a file carries of a product, for the merge with the stored product (shared/csv/merge.ts). */
export interface Carried {
  /** Paths in the product: a field the body holds keeps the stored parts not listed here. */
  product: string[][];
  /** Paths in a variant: a variant matched by SKU keeps the stored parts not listed here. */
  variant: string[][];
  /**
   * Paths in a media item: an item matched to a stored one by src keeps the stored parts not
   * listed here (its id, a name the layout made up from the URL). Without it, a matched item
   * keeps only its stored id, and only when the file gives none.
   */
  media?: string[][];
  /**
   * Variant paths the layout made up from the variant's option values, having no column for
   * them (Shopify's variant title): a variant matched by SKU keeps its stored value while its
   * option values are unchanged, and takes the made-up one when they change.
   */
  fromOptions?: string[][];
  /**
   * Product paths the rows give as they give a variant's (the commerce columns of Shopify's one
   * row of a product without variants, a WooCommerce parent's prices and type): with
   * `blankClears`, one the rows leave blank clears the stored value as a variant's does. Other
   * product fields left blank altogether (Vendor, Tags) stay.
   */
  cleared?: string[][];
  /**
   * Parts the layout writes lossily, several stored values as one cell (the product type as
   * Shopify's Requires shipping, as WooCommerce's virtual and downloadable flags): while the
   * cell the export writes for the stored product (or variant) is the one it writes for the
   * file's, the stored parts at `paths` stay, so a service product does not come back digital.
   * The cells are the layout's `lossyCells` (named by format: an async import stages this as JSON).
   */
  lossy?: { format: Layout['format']; paths: string[][] };
  /**
   * Whether the layout makes variant positions up from the order of the rows (Shopify): matched
   * variants keep their stored positions while the file keeps their order.
   */
  positionsFromOrder?: boolean;
  /**
   * Whether a carried part the rows leave blank clears the stored one. The platform layouts say
   * yes: their exports write a blank for "none" (no compare-at price, no barcode), so a blank
   * cell must clear, as it did when their variants were replaced whole. In native an empty cell
   * is not carried.
   */
  blankClears?: boolean;
}

/** A product as the API presents it (shared/products/present.ts presentProduct). */
export type PresentedProduct = Record<string, any>;

export interface Layout {
  format: 'native' | 'shopify' | 'woocommerce';
  /** The cell the export writes for the parts a file carries lossily (Carried.lossy). */
  lossyCells?: {
    product(p: Record<string, any>): string;
    variant(v: Record<string, any>, p: Record<string, any>): string;
  };
  /** Every column, in template and export order. */
  columns: string[];
  /**
   * For a layout whose columns repeat per item (WooCommerce's Attribute N, Download N): how many
   * of each a product needs, and the columns for the most any exported product needs (an export
   * writes `columns(max widths)` instead of `columns`; see exportColumns). `reads` are the
   * product fields `widths` looks at: an async export reads only those in a first pass.
   */
  repeated?: {
    reads: string[];
    widths(product: PresentedProduct): number[];
    columns(widths: number[]): string[];
  };
  /**
   * Groups records into products. Records of one product need not be adjacent, and a child
   * (variant, variation) may come before its parent.
   */
  parse(records: CsvRecord[], taken?: Set<string>): ParsedProduct[];
  /**
   * The columns parse reads to group records into products and to collect the SKUs the file
   * gives (see shared/csv/stage.ts): parsing records that carry only these columns (plus a
   * marker for a record with other non-empty cells) groups them exactly as the whole records.
   */
  keyColumns(header: string[]): string[];
  /**
   * The SKUs these records give, which derived SKUs avoid. `parse` collects them from its own
   * records unless `taken` is passed: then it uses that set, and adds the SKUs it derives, so
   * that products parsed group by group, in file order, get the SKUs a whole-file parse gives.
   */
  givenSkus(records: CsvRecord[]): Set<string>;
  /** The records of one product, in this layout. Exporting and importing again must change nothing. */
  toRecords(product: PresentedProduct): Record<string, string>[];
}
