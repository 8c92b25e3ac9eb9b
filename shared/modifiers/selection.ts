import { decimalOf } from '../materials/quantity';

/**
 * Whether a selection of modifiers is valid for a product's modifiers configuration, what it
 * adds to the price and what materials it consumes. Every rule lives here and only here: the
 * validate endpoint, order creation and material consumption all call `checkSelection`.
 *
 * Money is counted in integer cents (BigInt over the decimals as written), quantities as exact
 * decimals: no float sum ever drifts. Pure: no I/O, no clock of its own (`now` is given), safe to
 * import anywhere, workflows included.
 */

// ---------------------------------------------------------------------------------------------
// The stored configuration (shared/products/schema.ts modifiersConfigSchema), as read here
// ---------------------------------------------------------------------------------------------

export const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Day = (typeof DAYS)[number];

export const PRICE_ADJUSTMENT_TYPES = ['fixed', 'percentage', 'replace'] as const;
export type PriceAdjustmentType = (typeof PRICE_ADJUSTMENT_TYPES)[number];

export const MODIFIER_TYPES = ['addon', 'option', 'removal', 'substitution'] as const;

export interface PriceAdjustment {
  type: PriceAdjustmentType;
  value: number;
  currency?: string;
}

/** One material or supply a modifier uses up, per one of it selected, in `unit` (a unit of that SKU). */
export interface Consumption {
  sku: string;
  quantity: number;
  unit: string;
}

export interface Modifier {
  id: string;
  code?: string;
  name: string;
  type?: string;
  sku?: string;
  priceAdjustment?: PriceAdjustment;
  inventoryConsumption?: Consumption[];
  /** Default true. */
  available?: boolean;
  isDefault?: boolean;
  position?: number;
  channelBindings?: { channelType: string; externalId?: string; isEnabled?: boolean }[];
}

export interface SelectionRule {
  minSelections: number;
  maxSelections: number;
  exactlyOne?: boolean;
  allowDuplicates?: boolean;
  maxPerModifier?: number;
}

export interface ModifierGroup {
  id: string;
  code?: string;
  name: { value: string; translations?: { locale: string; value: string }[] };
  description?: string;
  selectionRule: SelectionRule;
  modifiers: Modifier[];
  position?: number;
  /** Default true. */
  active?: boolean;
  channelBindings?: { channelId: string; externalGroupId?: string; isEnabled?: boolean }[];
}

export interface ModifiersConditions {
  /** Upper-case variant SKUs; empty: every variant (and the product itself). */
  variantSkus?: string[];
  /** `HH:MM` local to the tenant; `end` before `start` wraps past midnight; `end` is not included. */
  availableHours?: { start: string; end: string };
  /** Empty or absent: every day. */
  availableDays?: Day[];
}

export interface ModifiersConfig {
  enabled: boolean;
  groups: ModifierGroup[];
  conditions?: ModifiersConditions;
}

// ---------------------------------------------------------------------------------------------
// A selection and its verdict
// ---------------------------------------------------------------------------------------------

/**
 * The modifiers chosen in one group, by the server's UUIDs. `quantities[i]` is how many of
 * `modifierIds[i]` (an integer ≥ 1, default 1); absent, each listed modifier counts once. A
 * modifier listed twice counts twice. Two selections of one group are read as one.
 */
export interface ModifierSelection {
  groupId: string;
  modifierIds: string[];
  quantities?: number[];
}

/** The consumption API's (and an order line's) form: one pair per modifier chosen. */
export interface ModifierPair {
  groupId: string;
  modifierId: string;
  /** Default 1. */
  quantity?: number;
}

export interface SelectionContext {
  /** The price the modifiers adjust: the variant's when one is ordered, else the product's. */
  basePrice: number;
  /** The variant ordered (any case), for conditions.variantSkus. */
  variantSku?: string;
  /** When the selection is made: availableHours and availableDays are read at this instant. */
  now: Date;
  /** The tenant's IANA time zone (settings.timeZone, UTC when absent), in which hours and days are read. */
  timeZone: string;
}

export type SelectionRuleName =
  | 'minSelections'
  | 'maxSelections'
  | 'exactlyOne'
  | 'allowDuplicates'
  | 'maxPerModifier'
  | 'unavailable'
  | 'unknown-group'
  | 'unknown-modifier'
  | 'variant'
  | 'hours'
  | 'days'
  | 'disabled'
  | 'replace'
  | 'quantities';

export interface SelectionError {
  groupId?: string;
  modifierId?: string;
  rule: SelectionRuleName;
  message: string;
}

export interface SelectedModifier {
  groupId: string;
  groupName: string;
  modifierId: string;
  modifierName: string;
  /** How many of it were chosen (all mentions summed). */
  quantity: number;
  /** The modifier's adjustment and `amount`, what it adds to the price for this quantity; null without one. */
  priceAdjustment: (PriceAdjustment & { amount: number }) | null;
  /** What this quantity of it consumes (the modifier's consumption × quantity). */
  inventoryConsumption: Consumption[];
}

export interface SelectionResult {
  valid: boolean;
  errors: SelectionError[];
  selectedModifiers: SelectedModifier[];
  /** Sum of the amounts, in the product's currency, exact to the cent (`Math.round(x * 100)` is its cents). */
  totalPriceAdjustment: number;
  /** Consumption of every selected modifier, summed per (SKU, unit), exact; for one unit of the product. */
  materialsToConsume: Consumption[];
}

/** Pairs `[{groupId, modifierId, quantity?}]` as selections, one per group in order of first mention. */
export function selectionsFromPairs(pairs: readonly ModifierPair[]): ModifierSelection[] {
  const byGroup = new Map<string, ModifierSelection & { quantities: number[] }>();
  for (const p of pairs) {
    let s = byGroup.get(p.groupId);
    if (!s) byGroup.set(p.groupId, (s = { groupId: p.groupId, modifierIds: [], quantities: [] }));
    s.modifierIds.push(p.modifierId);
    s.quantities.push(p.quantity ?? 1);
  }
  return [...byGroup.values()];
}

/** The price a selection adjusts: the named variant's (any case), else the product's; null for a SKU of neither. */
export function basePriceFor(
  product: { sku: string; price: number; variants?: { sku: string; price: number }[] },
  variantSku?: string,
): number | null {
  if (variantSku === undefined) return product.price;
  const want = variantSku.trim().toUpperCase();
  if (want === product.sku.toUpperCase()) return product.price;
  const v = (product.variants ?? []).find((x) => x.sku.toUpperCase() === want);
  return v ? v.price : null;
}

// ---------------------------------------------------------------------------------------------
// Exact arithmetic
// ---------------------------------------------------------------------------------------------

interface Dec {
  digits: bigint;
  scale: number;
}

/** num / den rounded half away from zero (den > 0). */
function roundDiv(num: bigint, den: bigint): bigint {
  const q = num / den;
  const r = num % den;
  if ((r < 0n ? -r : r) * 2n >= den) return num < 0n ? q - 1n : q + 1n;
  return q;
}

const pow10 = (n: number) => 10n ** BigInt(n);

/** A money value as integer cents, rounded half away from zero. */
/** A price in whole cents, half up, from its decimal digits (1.005 is 101, where 1.005 × 100 is 100.49…). */
export function centsOf(value: number): bigint {
  const d = decimalOf(value);
  return roundDiv(d.digits * 100n, pow10(d.scale));
}

/** What a modifier adds to the price, in cents, for `quantity` of it over `base`. */
export function adjustmentCents(adj: PriceAdjustment, quantity: number, basePrice: number): bigint {
  const v = decimalOf(adj.value);
  const q = BigInt(quantity);
  switch (adj.type) {
    case 'fixed':
      return roundDiv(v.digits * q * 100n, pow10(v.scale));
    case 'percentage': {
      // base × value / 100 × quantity, in cents: base × value × quantity at scale 0
      const b = decimalOf(basePrice);
      return roundDiv(b.digits * v.digits * q, pow10(b.scale + v.scale));
    }
    case 'replace':
      // the modifier's price stands instead of the base price, once whatever the quantity
      return centsOf(adj.value) - centsOf(basePrice);
  }
}

const fromCents = (c: bigint): number => Number(c) / 100;

function decTimes(value: number, times: number): Dec {
  const d = decimalOf(value);
  return { digits: d.digits * BigInt(times), scale: d.scale };
}

function decAdd(a: Dec, b: Dec): Dec {
  const scale = Math.max(a.scale, b.scale);
  return { digits: a.digits * pow10(scale - a.scale) + b.digits * pow10(scale - b.scale), scale };
}

/** The number nearest the decimal (its shortest text is the decimal for up to 15 significant digits). */
function decNumber(d: Dec): number {
  const negative = d.digits < 0n;
  const text = (negative ? -d.digits : d.digits).toString().padStart(d.scale + 1, '0');
  const int = text.slice(0, text.length - d.scale);
  const frac = text.slice(text.length - d.scale);
  return Number(`${negative ? '-' : ''}${int}${frac ? `.${frac}` : ''}`);
}

// ---------------------------------------------------------------------------------------------
// Time of day in the tenant's zone
// ---------------------------------------------------------------------------------------------

const clocks = new Map<string, Intl.DateTimeFormat>();

/** The weekday and minute of the day at `now` in `timeZone` (a RangeError for an unknown zone). */
export function localTime(now: Date, timeZone: string): { day: Day; minutes: number } {
  let f = clocks.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    clocks.set(timeZone, f);
  }
  const parts = Object.fromEntries(f.formatToParts(now).map((p) => [p.type, p.value]));
  const day = parts.weekday.slice(0, 3).toLowerCase() as Day;
  return { day, minutes: Number(parts.hour) * 60 + Number(parts.minute) };
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
const previousDay = (d: Day): Day => DAYS[(DAYS.indexOf(d) + 6) % 7];

/**
 * Whether the configuration's hours and days admit `now`: open from `start` (included) to `end`
 * (excluded); an `end` before `start` wraps past midnight, and its hours after midnight belong to
 * the day the window opened (Friday 22:00–02:00 is open early Saturday when Friday is a listed
 * day). `start` equal to `end` is the whole day.
 */
export function conditionsAt(
  c: ModifiersConditions | undefined,
  now: Date,
  timeZone: string,
): { hours: boolean; days: boolean } {
  const { day, minutes } = localTime(now, timeZone);
  let openedOn = day;
  let hours = true;
  if (c?.availableHours) {
    const start = minutesOf(c.availableHours.start);
    const end = minutesOf(c.availableHours.end);
    if (start < end) hours = minutes >= start && minutes < end;
    else if (start > end) {
      hours = minutes >= start || minutes < end;
      if (minutes < end) openedOn = previousDay(day);
    }
  }
  const days = !c?.availableDays?.length || c.availableDays.includes(openedOn);
  return { hours, days };
}

// ---------------------------------------------------------------------------------------------
// The rules
// ---------------------------------------------------------------------------------------------

const nameOf = (g: ModifierGroup) => g.name?.value ?? g.code ?? g.id;
const groupLabel = (g: ModifierGroup) => `group '${nameOf(g)}'`;

interface Tally {
  modifier: Modifier;
  quantity: number;
}

/**
 * The verdict on `selections` for `config` (a product never configured: undefined).
 *
 * - A disabled configuration takes no selection (`disabled`); neither does one whose conditions
 *   do not hold for this variant (`variant`) or at this time (`hours`, `days`) in the tenant's
 *   zone. An empty selection is then valid: the product is sold without modifiers, and required
 *   groups are not required.
 * - Groups and modifiers are named by id: `unknown-group`, `unknown-modifier` (an id of another
 *   group included); a modifier not `available` or a group not `active` is `unavailable`.
 * - Per group, the count is the sum of quantities: none while `minSelections > 0` is
 *   `minSelections` (required); fewer or more than min/max is `minSelections`/`maxSelections`. An
 *   `exactlyOne` group chosen at all takes exactly one (`exactlyOne`); `minSelections` says whether
 *   it must be chosen. The same modifier more than once (quantity > 1, or listed twice) needs
 *   `allowDuplicates`; its total may not pass `maxPerModifier`.
 * - Prices: `fixed` adds value × quantity; `percentage` value % of the base price × quantity
 *   (rounded to the cent once); `replace` makes the price the modifier's value (adds value − base,
 *   once, whatever the quantity), and a selection takes at most one replacing modifier (`replace`).
 * - materialsToConsume is each modifier's consumption × its quantity, summed per (SKU, unit).
 */
export function checkSelection(
  config: ModifiersConfig | undefined | null,
  selections: readonly ModifierSelection[],
  ctx: SelectionContext,
): SelectionResult {
  const cfg: ModifiersConfig = config ?? { enabled: false, groups: [] };
  const errors: SelectionError[] = [];

  // each group's mentions, merged, in order of first mention
  const merged = new Map<string, { modifierId: string; quantity: number }[]>();
  for (const s of selections) {
    if (s.quantities && s.quantities.length !== s.modifierIds.length) {
      errors.push({
        groupId: s.groupId,
        rule: 'quantities',
        message: `quantities must have one entry per modifierIds entry (${s.quantities.length} for ${s.modifierIds.length})`,
      });
      continue;
    }
    const bad = (s.quantities ?? []).find((q) => !Number.isSafeInteger(q) || q < 1);
    if (bad !== undefined) {
      errors.push({
        groupId: s.groupId,
        rule: 'quantities',
        message: `a quantity must be a whole number ≥ 1 (${bad})`,
      });
      continue;
    }
    const list = merged.get(s.groupId) ?? [];
    s.modifierIds.forEach((modifierId, i) => list.push({ modifierId, quantity: s.quantities?.[i] ?? 1 }));
    merged.set(s.groupId, list);
  }
  const anything = [...merged.values()].some((l) => l.length > 0);

  // not offered (disabled, or outside the conditions): nothing may be chosen, nothing is required
  const off = notOffered(cfg, ctx);
  if (off.length) {
    if (anything) errors.push(...off);
    return {
      valid: errors.length === 0,
      errors,
      selectedModifiers: [],
      totalPriceAdjustment: 0,
      materialsToConsume: [],
    };
  }

  const groups = new Map(cfg.groups.map((g) => [g.id, g]));
  const chosen: { group: ModifierGroup; tallies: Tally[] }[] = [];
  for (const [groupId, mentions] of merged) {
    const group = groups.get(groupId);
    if (!group) {
      errors.push({ groupId, rule: 'unknown-group', message: `no modifier group ${groupId} in this product` });
      continue;
    }
    if (group.active === false) {
      if (mentions.length) errors.push({ groupId, rule: 'unavailable', message: `${groupLabel(group)} is not active` });
      continue;
    }
    const tallies = new Map<string, Tally>();
    const refusedIds = new Set<string>();
    for (const { modifierId, quantity } of mentions) {
      const modifier = group.modifiers.find((m) => m.id === modifierId);
      if (!modifier || modifier.available === false) {
        if (!refusedIds.has(modifierId))
          errors.push(
            modifier
              ? {
                  groupId,
                  modifierId,
                  rule: 'unavailable',
                  message: `modifier '${modifier.name}' of ${groupLabel(group)} is not available`,
                }
              : {
                  groupId,
                  modifierId,
                  rule: 'unknown-modifier',
                  message: `no modifier ${modifierId} in ${groupLabel(group)}`,
                },
          );
        refusedIds.add(modifierId);
        continue;
      }
      const t = tallies.get(modifierId);
      if (t) t.quantity += quantity;
      else tallies.set(modifierId, { modifier, quantity });
    }
    errors.push(...groupErrors(group, [...tallies.values()]));
    chosen.push({ group, tallies: [...tallies.values()] });
  }
  // required groups not mentioned at all
  const mentioned = new Set(selections.map((s) => s.groupId));
  for (const g of cfg.groups) if (g.active !== false && !mentioned.has(g.id)) errors.push(...groupErrors(g, []));

  // prices and materials
  const selectedModifiers: SelectedModifier[] = [];
  let total = 0n;
  let replaced: Modifier | null = null;
  const materials = new Map<string, { sku: string; unit: string; amount: Dec }>();
  for (const { group, tallies } of chosen) {
    for (const { modifier, quantity } of tallies) {
      let priceAdjustment: SelectedModifier['priceAdjustment'] = null;
      if (modifier.priceAdjustment) {
        let cents = adjustmentCents(modifier.priceAdjustment, quantity, ctx.basePrice);
        if (modifier.priceAdjustment.type === 'replace') {
          if (replaced) {
            errors.push({
              groupId: group.id,
              modifierId: modifier.id,
              rule: 'replace',
              message: `modifier '${modifier.name}' replaces the price, and so does '${replaced.name}': a selection takes at most one`,
            });
            cents = 0n;
          } else replaced = modifier;
        }
        total += cents;
        priceAdjustment = { ...modifier.priceAdjustment, amount: fromCents(cents) };
      }
      const inventoryConsumption = (modifier.inventoryConsumption ?? []).map((c) => {
        const amount = decTimes(c.quantity, quantity);
        const key = `${c.sku.toUpperCase()}\u0000${c.unit.toLowerCase()}`;
        const m = materials.get(key);
        if (m) m.amount = decAdd(m.amount, amount);
        else materials.set(key, { sku: c.sku.toUpperCase(), unit: c.unit, amount });
        return { sku: c.sku.toUpperCase(), quantity: decNumber(amount), unit: c.unit };
      });
      selectedModifiers.push({
        groupId: group.id,
        groupName: nameOf(group),
        modifierId: modifier.id,
        modifierName: modifier.name,
        quantity,
        priceAdjustment,
        inventoryConsumption,
      });
    }
  }
  return {
    valid: errors.length === 0,
    errors,
    selectedModifiers,
    totalPriceAdjustment: fromCents(total),
    materialsToConsume: [...materials.values()].map((m) => ({
      sku: m.sku,
      quantity: decNumber(m.amount),
      unit: m.unit,
    })),
  };
}

/** Why the configuration's modifiers are not offered for this variant at this time (none: they are). */
function notOffered(cfg: ModifiersConfig, ctx: SelectionContext): SelectionError[] {
  if (!cfg.enabled) return [{ rule: 'disabled', message: 'the modifiers of this product are disabled: select none' }];
  const off: SelectionError[] = [];
  const c = cfg.conditions;
  const variants = c?.variantSkus ?? [];
  if (variants.length) {
    const v = ctx.variantSku?.trim().toUpperCase();
    if (!v || !variants.some((x) => x.toUpperCase() === v))
      off.push({
        rule: 'variant',
        message: `modifiers apply only to the variants ${variants.join(', ')}${v ? `, not ${v}` : '; name the variant ordered'}`,
      });
  }
  const at = conditionsAt(c, ctx.now, ctx.timeZone);
  if (!at.hours)
    off.push({
      rule: 'hours',
      message: `modifiers are available from ${c!.availableHours!.start} to ${c!.availableHours!.end} (${ctx.timeZone})`,
    });
  if (!at.days)
    off.push({
      rule: 'days',
      message: `modifiers are available on ${c!.availableDays!.join(', ')} only (${ctx.timeZone})`,
    });
  return off;
}

/** The count rules of one active group over its known, available choices. */
function groupErrors(group: ModifierGroup, tallies: Tally[]): SelectionError[] {
  const r = group.selectionRule;
  const groupId = group.id;
  const out: SelectionError[] = [];
  const count = tallies.reduce((n, t) => n + t.quantity, 0);
  if (count === 0) {
    if (r.minSelections > 0)
      out.push({
        groupId,
        rule: 'minSelections',
        message: `${groupLabel(group)} is required: select at least ${r.minSelections}`,
      });
  } else if (r.exactlyOne) {
    if (count !== 1)
      out.push({ groupId, rule: 'exactlyOne', message: `${groupLabel(group)} takes exactly one; ${count} selected` });
  } else {
    if (count < r.minSelections)
      out.push({
        groupId,
        rule: 'minSelections',
        message: `${groupLabel(group)} takes at least ${r.minSelections}; ${count} selected`,
      });
    if (count > r.maxSelections)
      out.push({
        groupId,
        rule: 'maxSelections',
        message: `${groupLabel(group)} takes at most ${r.maxSelections}; ${count} selected`,
      });
  }
  for (const { modifier, quantity } of tallies) {
    if (quantity > 1 && !r.allowDuplicates)
      out.push({
        groupId,
        modifierId: modifier.id,
        rule: 'allowDuplicates',
        message: `modifier '${modifier.name}' is selected ${quantity} times; ${groupLabel(group)} takes each modifier once`,
      });
    else if (r.maxPerModifier !== undefined && quantity > r.maxPerModifier)
      out.push({
        groupId,
        modifierId: modifier.id,
        rule: 'maxPerModifier',
        message: `modifier '${modifier.name}' is selected ${quantity} times; ${groupLabel(group)} takes each at most ${r.maxPerModifier} times`,
      });
  }
  return out;
}
