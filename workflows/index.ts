// Every workflow the worker runs. Workflow code imports only @temporalio/workflow, activity
// types and pure code from shared/ (test/unit/workflow-imports.test.ts keeps it so).
export { pingWorkflow } from './system/ping.workflow';
export { rollbackWorkflow } from './bulk/rollback.workflow';
export { csvImportWorkflow } from './csv/import.workflow';
export { csvExportWorkflow } from './csv/export.workflow';
export { transferWorkflow } from './inventory/transfer.workflow';
export { publicationWorkflow } from './publication/publish.workflow';
export { orderStockWorkflow } from './orders/order-stock.workflow';
export { bulkEditWorkflow } from './edits/bulk-edit.workflow';
export { endpointDeliveriesWorkflow } from './webhooks/endpoint-deliveries.workflow';
