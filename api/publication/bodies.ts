import { filtersFrom } from '../../shared/products/query';
import type { PublishOptions } from '../../shared/publication/publication';
import { filteredCondition, type Selection, type SelectionMode } from '../../shared/publication/selection';

/** The bodies of the publication routes, as their schemas have validated them. */
export interface PublishBody {
  channelId: string;
  mode?: SelectionMode;
  selectionMode?: SelectionMode;
  productIds?: string[];
  filters?: Record<string, unknown>;
  targetMarketplaces?: string[];
  options?: Partial<PublishOptions>;
}

export interface ValidateBody {
  channelId: string;
  selectionMode: SelectionMode;
  skus?: string[];
  filters?: Record<string, unknown>;
  page: number;
  limit: number;
}

/** The selection a validated body names: ids and filters only where its mode takes them. */
export function selectionOf(
  mode: SelectionMode,
  ids: string[] | undefined,
  filters: Record<string, unknown> | undefined,
): Selection {
  if (mode === 'single' || mode === 'selected') return { mode, productIds: ids };
  if (mode === 'filtered') {
    // a null filter is no filter
    const given = Object.fromEntries(Object.entries(filters ?? {}).filter(([, v]) => v !== null));
    const read = filtersFrom(given);
    // refused here, before the channel is looked up: a body error (filters naming nothing) comes first
    filteredCondition(read);
    return { mode, filters: read };
  }
  return { mode };
}
