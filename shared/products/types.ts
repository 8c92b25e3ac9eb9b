import type { ObjectId } from 'mongodb';

/** Types of the product as validated by schema.ts (defaults filled). Sub-shapes the service does not read stay loose. */
export interface Translated {
  value: string;
  translations: { locale: string; value: string }[];
}

export interface VariantInput {
  id?: string;
  sku: string;
  parentSku?: string;
  productSku?: string;
  imageId?: string;
  productType: 'physical' | 'digital' | 'service';
  title: Translated;
  price: number;
  compareAtPrice?: number;
  position: number;
  taxable: boolean;
  options: { id: string; name: string; value: string }[];
  bindings: { id?: string; channelId: string; handle: string }[];
  minAlertStock: number | null;
  sellIfOutOfStock: boolean;
  priceSchemas: { id?: string }[];
  costs: { id?: string }[];
  [more: string]: unknown;
}

export interface BindingInput {
  id?: string;
  channelId: string;
  handle: string;
  type: string;
  [more: string]: unknown;
}

export interface ProductInput {
  sku: string;
  status: 'active' | 'disabled' | 'draft';
  productType: 'physical' | 'digital' | 'service' | 'bundle' | 'supply' | 'material';
  title: Translated;
  price: number;
  compareAtPrice?: number;
  currency: string;
  taxable: boolean;
  brand?: string;
  productKind?: string;
  tags: string[];
  category?: { id?: string; name: string; path: string; [more: string]: unknown };
  media: { id?: string; src: string; [more: string]: unknown }[];
  options: { id?: string; name: string; values: string[] }[];
  variants: VariantInput[];
  bindings: BindingInput[];
  priceSchemas: { id?: string }[];
  costs: { id?: string }[];
  metafields: { namespace?: string; key: string; type: string; value: unknown }[];
  minAlertStock: number;
  bundleConfig?: {
    inventoryMode: string;
    components: { productSku: string; variantMode: string; quantity: number; required: boolean }[];
  };
  billOfMaterials?: {
    components: { materialSku: string; sequence?: number; substitutes: { materialSku: string }[] }[];
    [more: string]: unknown;
  };
  modifiersConfig?: {
    enabled: boolean;
    groups: {
      id?: string;
      code?: string;
      selectionRule: { minSelections: number; maxSelections: number; exactlyOne?: boolean };
      modifiers: { id?: string; inventoryConsumption: { sku: string }[]; [more: string]: unknown }[];
      [more: string]: unknown;
    }[];
    conditions?: { variantSkus: string[]; [more: string]: unknown };
  };
  [more: string]: unknown;
}

/** A product as stored: the normalised input plus what the server manages. */
export interface ProductDoc extends ProductInput {
  _id: ObjectId;
  tenantId: string;
  createdAt: Date;
  updatedAt: Date;
  /** Incremented by every write; a write is guarded by the version it read. */
  version: number;
  /** SKUs, title, brand and tags, lower-cased, for search (search.ts); set by every write, never shown. */
  search?: string;
  /**
   * The bulk operation whose edit wrote the product last (shared/edits/apply.ts): what tells that
   * operation its guarded write landed, which the version alone cannot (another write may have
   * made the same version). Never shown; dropped by any other full write.
   */
  lastEditBy?: string;
  /**
   * The bulk operations whose writes reached it, the latest EDITED_BY_KEPT (edit-marks.ts). Kept by
   * every other write (lastEditBy is not), so a retried page or chunk, or the end of an operation
   * whose process died, tells its own write that landed from one that never did, even after a
   * user's save. Never shown.
   */
  editedBy?: string[];
}
