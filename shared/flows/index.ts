/** The rule-flow language: definition and schema, field paths, validation, and running a flow on one product. */
export * from './definition';
export {
  clearField,
  fieldSchemaAt,
  isWritableField,
  metafieldTypeOf,
  readField,
  resolveField,
  writeField,
  type FieldInfo,
  type FieldKind,
} from './fields';
export { operatorsFor } from './conditions';
export { flowErrors, type FlowError } from './validate';
export { runFlow, isFlowRunFailure, type FlowRunResult, type FlowRunSuccess, type FlowRunFailure } from './run';
