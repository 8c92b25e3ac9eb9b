import { AppError } from '../../errors/catalog';
import type { Layout } from '../layout';
import { nativeLayout } from './native';
import { shopifyLayout } from './shopify';
import { woocommerceLayout } from './woocommerce';

/** The layouts by format: ours (native) and the two platforms whose files merchants bring. */
const LAYOUTS: Record<string, Layout> = {
  native: nativeLayout,
  shopify: shopifyLayout,
  woocommerce: woocommerceLayout,
};

export const FORMATS = Object.keys(LAYOUTS);

export function layoutFor(format: string | undefined, code = 'unsupported-format'): Layout {
  const layout = LAYOUTS[format ?? 'native'];
  if (!layout)
    throw new AppError(400, code, `Unsupported format ${JSON.stringify(format)}; use one of ${FORMATS.join(', ')}`, {
      field: 'format',
    });
  return layout;
}
