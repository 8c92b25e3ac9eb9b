import type { FieldInfo, FieldKind } from './fields';

/** Fields as error messages name them: "brand (text)", "tags (list of text)", "status (one of: …)". */

const KIND_LABEL: Record<FieldKind, string> = {
  text: 'text',
  number: 'number',
  boolean: 'true/false',
  date: 'date',
  list: 'list',
  structure: 'structured: set its fields one by one',
  any: 'any value',
};

export function enumOf(info: FieldInfo): unknown[] | null {
  const schema = info.kind === 'list' ? (info.schema.items as Record<string, unknown>) : info.schema;
  return Array.isArray(schema.enum) ? schema.enum : null;
}

export function typeLabel(info: FieldInfo): string {
  if (info.kind === 'list') return `list of ${KIND_LABEL[info.itemKind!]}`;
  return KIND_LABEL[info.kind];
}

export function fieldLabel(info: FieldInfo): string {
  return `${info.path} (${typeLabel(info)})`;
}
