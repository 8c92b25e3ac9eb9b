import { AppError } from '../../errors/catalog';
import type { Layout, PresentedProduct } from '../layout';
import { nativeLayout } from './native';
import { shopifyLayout } from './shopify';
import { woocommerceLayout } from './woocommerce';

/**
 * The layouts by format: ours (native) and the two platforms whose files merchants bring. A Map,
 * not an object: a format is a client's text, and `__proto__` or `toString` must find nothing
 * rather than what every object inherits.
 */
const LAYOUTS = new Map<string, Layout>([
  ['native', nativeLayout],
  ['shopify', shopifyLayout],
  ['woocommerce', woocommerceLayout],
]);

export const FORMATS: readonly string[] = [...LAYOUTS.keys()];

/** The layout of a format (none: native); an unknown one is refused: 400 unsupported-format. */
export function layoutFor(format: string | undefined): Layout {
  const layout = LAYOUTS.get(format ?? 'native');
  if (!layout)
    throw new AppError(
      400,
      'unsupported-format',
      `Unsupported format ${JSON.stringify(format)}; use one of ${FORMATS.join(', ')}`,
      {
        field: 'format',
      },
    );
  return layout;
}

/**
 * What an export's columns must hold: the widest of each repeated group its products need
 * (Layout.repeated). Fed one product at a time, so an async export need not hold them.
 */
export class ExportColumns {
  private widths: number[] = [];
  constructor(private readonly layout: Layout) {}

  add(product: PresentedProduct): void {
    this.layout.repeated?.widths(product).forEach((w, i) => (this.widths[i] = Math.max(this.widths[i] ?? 0, w)));
  }

  get columns(): string[] {
    return this.layout.repeated ? this.layout.repeated.columns(this.widths) : this.layout.columns;
  }
}
