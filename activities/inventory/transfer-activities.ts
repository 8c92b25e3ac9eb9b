import { ApplicationFailure } from '@temporalio/activity';
import type { ActivityDeps } from '../index';
import { TenantDb } from '../../shared/db/tenant-db';
import { AppError } from '../../shared/errors/catalog';
import { Ledger } from '../../shared/inventory/ledger';
import { lotCosts, outgoingUnitCost, recordLotCost } from '../../shared/inventory/lots';
import { transfers, type TransferDoc, type TransferEvent } from '../../shared/inventory/transfers';
import type { TransferLine } from '../../shared/inventory/transfer-rules';

export interface MoveTransferInput {
  tenantId: string;
  transferId: string;
  /** Which receive attempt of the workflow this is: a refused attempt's reversals do not stop a later one. */
  attempt: number;
  originId: string;
  destinationId: string;
  productsList: TransferLine[];
  actor: string;
}

/**
 * Transfer activities. Stock moves through the ledger with keys derived from the transfer, the
 * attempt and the line, so a retried activity (a killed worker) moves nothing twice.
 */
export function transferActivities({ db }: ActivityDeps) {
  return {
    /**
     * Out of the origin, then into the destination, line by line. A line the origin cannot cover
     * puts back what this attempt took and fails the receive (non-retryable: it needs stock first).
     * Before a line leaves, what its units cost at the origin is noted as the cost of the lot it
     * makes at the destination (a retry keeps the first note).
     */
    async moveTransferStock(input: MoveTransferInput): Promise<void> {
      const tenantDb = new TenantDb(db, input.tenantId);
      const ledger = new Ledger(tenantDb);
      const key = (what: string, sku: string) => `trf:${input.transferId}:${input.attempt}:${what}:${sku}`;
      const reference = { type: 'transfer', id: input.transferId };
      const taken: TransferLine[] = [];
      for (const line of input.productsList) {
        await recordLotCost(tenantDb, key('in', line.sku), line.sku, () =>
          outgoingUnitCost(tenantDb, line.sku, input.originId, line.quantity),
        );
        try {
          await ledger.apply({
            sku: line.sku,
            locationId: input.originId,
            delta: -line.quantity,
            reason: 'transfer_out',
            reference,
            actor: input.actor,
            idempotencyKey: key('out', line.sku),
          });
          taken.push(line);
        } catch (err) {
          if (!(err instanceof AppError) || err.status !== 409) throw err;
          for (const back of taken) {
            await ledger.apply({
              sku: back.sku,
              locationId: input.originId,
              delta: back.quantity,
              reason: 'transfer_reversal',
              reference,
              actor: input.actor,
              idempotencyKey: key('back', back.sku),
            });
          }
          // the costs noted for receipts that will not happen
          for (const noted of [...taken, line])
            await tenantDb.collection(lotCosts).deleteById(`${input.tenantId}:${key('in', noted.sku)}`);
          throw ApplicationFailure.nonRetryable(err.message, 'insufficient-stock', err.extra.details);
        }
      }
      for (const line of input.productsList) {
        await ledger.apply({
          sku: line.sku,
          locationId: input.destinationId,
          delta: line.quantity,
          reason: 'transfer_in',
          reference,
          actor: input.actor,
          idempotencyKey: key('in', line.sku),
        });
      }
    },

    /** Mirrors the workflow's state into the transfer record; the same event twice is kept once. */
    async recordTransfer(input: {
      tenantId: string;
      transferId: string;
      set: Partial<TransferDoc>;
      event: TransferEvent;
    }): Promise<void> {
      const col = new TenantDb(db, input.tenantId).collection(transfers);
      await col.updateById(input.transferId, {
        $set: { ...input.set, updatedAt: input.event.at },
        $addToSet: { history: input.event },
      });
    },
  };
}
