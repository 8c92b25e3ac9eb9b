import { randomUUID } from 'node:crypto';
import type { FieldError } from '../errors/catalog';
import { decimalOf, findUnit, unitCodes, type UnitSystem } from '../materials/quantity';
import type {
  Consumption,
  Day,
  Modifier,
  ModifierGroup,
  ModifiersConditions,
  ModifiersConfig,
  PriceAdjustmentType,
  SelectionRule,
} from './selection';

/**
 * A modifiers configuration as the client writes it (the spec's input shape, validated by
 * schemas.ts) turned into the stored shape (modifiersConfigSchema): the server's UUIDs, group
 * codes `group-<n>`, modifier codes `<group code>-<n>` (1-based, in order), description from
 * displayName, position from sortOrder (else the index), available from isAvailable, and one
 * inventoryConsumption object as an array of `{sku, quantity, unit}`. Also the checks a schema
 * cannot make, each a field error naming the group and modifier by index. Pure (ids injectable).
 */

export interface ConsumptionInput {
  materialSku: string;
  quantity: number;
  unit: string;
}

export interface ModifierInput {
  name: string;
  type?: string;
  sku?: string;
  priceAdjustment?: { type: PriceAdjustmentType; value: number; currency?: string };
  inventoryConsumption?: ConsumptionInput;
  isDefault?: boolean;
  isAvailable?: boolean;
  sortOrder?: number;
  channelBindings?: Modifier['channelBindings'];
}

export interface GroupInput {
  name: string | { value: string; translations?: { locale: string; value: string }[] };
  displayName?: string;
  selectionRule: SelectionRule;
  modifiers: ModifierInput[];
  sortOrder?: number;
  active?: boolean;
  channelBindings?: ModifierGroup['channelBindings'];
}

export interface ConfigureInput {
  enabled: boolean;
  groups: GroupInput[];
  conditions?: { variantSkus?: string[]; availableHours?: { start: string; end: string }; availableDays?: Day[] };
}

/** PATCH of one group: the fields sent replace the stored ones; selectionRule is merged; modifiers replace them all. */
export interface GroupPatch {
  name?: GroupInput['name'];
  displayName?: string;
  selectionRule?: Partial<SelectionRule>;
  modifiers?: ModifierInput[];
  sortOrder?: number;
  active?: boolean;
  channelBindings?: ModifierGroup['channelBindings'];
}

export interface ConfigureContext {
  /** The unit systems of the materials and supplies the input names, by upper-case SKU (absent: no such record). */
  units: ReadonlyMap<string, UnitSystem>;
  /** The product's currency: an adjustment in another is refused. */
  currency: string;
  /** The product's variant SKUs, upper-case (what conditions.variantSkus may name). */
  variantSkus: ReadonlySet<string>;
  newId?: () => string;
}

export interface Built<T> {
  value: T;
  errors: FieldError[];
}

/** Every material or supply SKU an input consumes (as sent). */
export function consumedSkus(groups: { modifiers?: ModifierInput[] }[]): string[] {
  return groups.flatMap((g) =>
    (g.modifiers ?? []).flatMap((m) => (m.inventoryConsumption ? [m.inventoryConsumption.materialSku] : [])),
  );
}

const translated = (name: GroupInput['name']): ModifierGroup['name'] =>
  typeof name === 'string'
    ? { value: name.trim(), translations: [] }
    : { value: name.value.trim(), translations: name.translations ?? [] };

/** A selection rule's contradictions (shared/products/rules.ts refuses the first two again on write). */
export function selectionRuleErrors(r: SelectionRule, field: string): FieldError[] {
  const out: FieldError[] = [];
  if (r.maxSelections < r.minSelections)
    out.push({ field: `${field}.maxSelections`, message: `must be at least minSelections (${r.minSelections})` });
  if (r.exactlyOne && (r.minSelections > 1 || r.maxSelections < 1))
    out.push({
      field: `${field}.exactlyOne`,
      message: `contradicts minSelections ${r.minSelections} / maxSelections ${r.maxSelections} (exactly one needs min ≤ 1 ≤ max)`,
    });
  if (r.maxPerModifier !== undefined && r.maxPerModifier > 1 && !r.allowDuplicates)
    out.push({
      field: `${field}.maxPerModifier`,
      message: 'above 1 needs allowDuplicates: without it each modifier is taken at most once',
    });
  return out;
}

function buildModifier(
  m: ModifierInput,
  index: number,
  groupCode: string,
  field: string,
  ctx: ConfigureContext,
  /** The number of the group's last code already given: new codes follow it. */
  codesUsed = 0,
): Built<Modifier> {
  const errors: FieldError[] = [];
  const adj = m.priceAdjustment;
  if (adj) {
    if (adj.currency !== undefined && adj.currency !== ctx.currency)
      errors.push({
        field: `${field}.priceAdjustment.currency`,
        message: `must be the product's currency ${ctx.currency} (got ${adj.currency})`,
      });
    if (adj.type !== 'percentage' && decimalOf(adj.value).scale > 2)
      errors.push({
        field: `${field}.priceAdjustment.value`,
        message: `must be a whole number of cents (${adj.value})`,
      });
    if (adj.type === 'replace' && adj.value < 0)
      errors.push({
        field: `${field}.priceAdjustment.value`,
        message: `a replacing price cannot be negative (${adj.value})`,
      });
  }
  const consumption: Consumption[] = [];
  const c = m.inventoryConsumption;
  if (c) {
    const sku = c.materialSku.trim().toUpperCase();
    const units = ctx.units.get(sku);
    if (!units)
      errors.push({
        field: `${field}.inventoryConsumption.materialSku`,
        message: `names no material or supply of the tenant (${sku})`,
      });
    else {
      const unit = findUnit(units, c.unit);
      if (!unit)
        errors.push({
          field: `${field}.inventoryConsumption.unit`,
          message: `'${c.unit}' is not a unit of ${sku} (its units: ${unitCodes(units).join(', ')})`,
        });
      else consumption.push({ sku, quantity: c.quantity, unit: unit.code });
    }
  }
  const value: Modifier = {
    id: (ctx.newId ?? randomUUID)(),
    code: `${groupCode}-${codesUsed + index + 1}`,
    name: m.name.trim(),
    type: m.type ?? 'addon',
    ...(m.sku !== undefined ? { sku: m.sku.trim().toUpperCase() } : {}),
    ...(adj ? { priceAdjustment: { type: adj.type, value: adj.value, currency: ctx.currency } } : {}),
    inventoryConsumption: consumption,
    available: m.isAvailable ?? true,
    isDefault: m.isDefault ?? false,
    position: m.sortOrder ?? index,
    channelBindings: m.channelBindings ?? [],
  };
  return { value, errors };
}

function buildModifiers(
  modifiers: ModifierInput[],
  groupCode: string,
  field: string,
  ctx: ConfigureContext,
  codesUsed = 0,
): Built<Modifier[]> {
  const built = modifiers.map((m, j) => buildModifier(m, j, groupCode, `${field}.${j}`, ctx, codesUsed));
  return { value: built.map((b) => b.value), errors: built.flatMap((b) => b.errors) };
}

const ruleOf = (r: SelectionRule): SelectionRule => ({
  minSelections: r.minSelections,
  maxSelections: r.maxSelections,
  exactlyOne: r.exactlyOne ?? false,
  allowDuplicates: r.allowDuplicates ?? false,
  ...(r.maxPerModifier !== undefined ? { maxPerModifier: r.maxPerModifier } : {}),
});

/** One group of a configure input, the `index`-th (its code `group-<index + 1>`). */
export function buildGroup(g: GroupInput, index: number, field: string, ctx: ConfigureContext): Built<ModifierGroup> {
  const id = (ctx.newId ?? randomUUID)();
  const code = `group-${index + 1}`;
  const rule = ruleOf(g.selectionRule);
  const modifiers = buildModifiers(g.modifiers, code, `${field}.modifiers`, ctx);
  const value: ModifierGroup = {
    id,
    code,
    name: translated(g.name),
    ...(g.displayName ? { description: g.displayName } : {}),
    selectionRule: rule,
    modifiers: modifiers.value,
    position: g.sortOrder ?? index,
    active: g.active ?? true,
    channelBindings: g.channelBindings ?? [],
  };
  return { value, errors: [...selectionRuleErrors(rule, `${field}.selectionRule`), ...modifiers.errors] };
}

function conditionErrors(c: ModifiersConditions, ctx: ConfigureContext): FieldError[] {
  const out: FieldError[] = [];
  (c.variantSkus ?? []).forEach((sku, i) => {
    if (!ctx.variantSkus.has(sku))
      out.push({ field: `conditions.variantSkus.${i}`, message: `is not a variant SKU of this product (${sku})` });
  });
  const h = c.availableHours;
  if (h && h.start === h.end)
    out.push({
      field: 'conditions.availableHours.end',
      message: `equals start (${h.start}): an empty window; leave availableHours out for the whole day`,
    });
  return out;
}

/** The stored configuration for a configure input (replacing everything), and what is wrong with it. */
export function buildModifiersConfig(input: ConfigureInput, ctx: ConfigureContext): Built<ModifiersConfig> {
  const groups = input.groups.map((g, i) => buildGroup(g, i, `groups.${i}`, ctx));
  const c = input.conditions;
  const conditions: ModifiersConditions | undefined = c && {
    variantSkus: [...new Set((c.variantSkus ?? []).map((s) => s.trim().toUpperCase()))],
    ...(c.availableHours ? { availableHours: { start: c.availableHours.start, end: c.availableHours.end } } : {}),
    ...(c.availableDays ? { availableDays: c.availableDays } : {}),
  };
  return {
    value: { enabled: input.enabled, groups: groups.map((g) => g.value), ...(conditions ? { conditions } : {}) },
    errors: [...groups.flatMap((g) => g.errors), ...(conditions ? conditionErrors(conditions, ctx) : [])],
  };
}

/**
 * A stored group with a patch applied: id, code and the modifiers kept unless `modifiers` is
 * sent (then converted as in configure, with new ids). `displayName: ''` removes the description.
 */
export function patchGroup(current: ModifierGroup, patch: GroupPatch, ctx: ConfigureContext): Built<ModifierGroup> {
  const rule = ruleOf({ ...current.selectionRule, ...patch.selectionRule });
  const code = current.code ?? 'group';
  // modifiers sent again are new ones: their codes follow the group's, never taking one back
  const used = Math.max(
    0,
    ...current.modifiers.map((m) => Number(/-(\d+)$/.exec(m.code ?? '')?.[1] ?? 0)).filter(Number.isFinite),
  );
  const modifiers = patch.modifiers ? buildModifiers(patch.modifiers, code, 'modifiers', ctx, used) : null;
  const { description: _d, ...rest } = current;
  const description = patch.displayName !== undefined ? patch.displayName : current.description;
  const value: ModifierGroup = {
    ...rest,
    ...(patch.name !== undefined ? { name: translated(patch.name) } : {}),
    ...(description ? { description } : {}),
    selectionRule: rule,
    ...(modifiers ? { modifiers: modifiers.value } : {}),
    ...(patch.sortOrder !== undefined ? { position: patch.sortOrder } : {}),
    ...(patch.active !== undefined ? { active: patch.active } : {}),
    ...(patch.channelBindings !== undefined ? { channelBindings: patch.channelBindings } : {}),
  };
  return { value, errors: [...selectionRuleErrors(rule, 'selectionRule'), ...(modifiers?.errors ?? [])] };
}
