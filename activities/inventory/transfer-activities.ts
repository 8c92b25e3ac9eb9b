import { activityInfo, heartbeat } from '@temporalio/activity';
import type { ActivityDeps } from '../index';
import { TenantDb } from '../../shared/db/tenant-db';
import { AppError } from '../../shared/errors/catalog';
import { Ledger } from '../../shared/inventory/ledger';
import { assertManualEdits } from '../../shared/inventory/handlers';
import { Locations } from '../../shared/locations/locations';
import { lotCosts, outgoingUnitCost, recordLotCost } from '../../shared/inventory/lots';
import { transferEvent, transfers, type TransferDoc, type TransferEvent } from '../../shared/inventory/transfers';
import { recordEvent } from '../../shared/webhooks/events';
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

/** Where a receive has got to: the checkpoint it heartbeats, and resumes from after a retry. */
interface MoveProgress {
  /** Lines [0, out) have left the origin. */
  out: number;
  /** Lines [0, in) have entered the destination (only once every line has left). */
  in: number;
}

/**
 * Transfer activities. Stock moves through the ledger with keys derived from the transfer, the
 * attempt and the line, so a retried activity (a killed worker) moves nothing twice.
 */
export function transferActivities({ db }: ActivityDeps) {
  return {
    /**
     * Out of the origin, then into the destination, line by line. A line the origin cannot cover
     * puts back what this attempt took and fails the receive with the ledger's refusal (an
     * AppError: not retried, it needs stock first). Before a line leaves, what its units cost at
     * the origin is noted as the cost of the lot it makes at the destination (a retry keeps the
     * first note). It heartbeats after each line, so a dead worker's receive is handed on within
     * the heartbeat timeout, and a retry starts after the last line it reported (the keys make
     * the lines before it, and any it did not report, no-ops anyway).
     */
    async moveTransferStock(input: MoveTransferInput): Promise<void> {
      const tenantDb = new TenantDb(db, input.tenantId);
      const ledger = new Ledger(tenantDb);
      const key = (what: string, sku: string) => `trf:${input.transferId}:${input.attempt}:${what}:${sku}`;
      const reference = { type: 'transfer', id: input.transferId };
      const lines = input.productsList;
      const from = (activityInfo().heartbeatDetails as MoveProgress | undefined) ?? { out: 0, in: 0 };
      // a location deleted since the transfer was made could never give the stock back: refuse
      // before anything moves (an approved transfer also keeps its locations from being deleted)
      if (from.out === 0) {
        // a handler made since the transfer was created refuses it too
        await assertManualEdits(
          tenantDb,
          lines.map((l) => l.sku),
          [input.originId, input.destinationId],
        );
        const locations = new Locations(tenantDb);
        for (const id of [input.originId, input.destinationId])
          if (!(await locations.getRaw(id)))
            throw new AppError(404, 'not-found/location', `Location ${id} no longer exists; cancel the transfer`, {
              field: id === input.originId ? 'originId' : 'destinationId',
            });
      }
      for (let i = from.out; i < lines.length; i++) {
        const line = lines[i];
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
        } catch (err) {
          if (!(err instanceof AppError) || err.status !== 409) throw err;
          const taken = lines.slice(0, i);
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
          throw err;
        }
        heartbeat({ out: i + 1, in: 0 } satisfies MoveProgress);
      }
      for (let i = from.in; i < lines.length; i++) {
        const line = lines[i];
        await ledger.apply({
          sku: line.sku,
          locationId: input.destinationId,
          delta: line.quantity,
          reason: 'transfer_in',
          reference,
          actor: input.actor,
          idempotencyKey: key('in', line.sku),
        });
        heartbeat({ out: lines.length, in: i + 1 } satisfies MoveProgress);
      }
    },

    /**
     * Mirrors the workflow's state into the transfer record; the same event twice is kept once.
     * Then announces the new status (transfer.approved / received / cancelled), keyed by the
     * transfer and its status: a status is reached once, and a retry records the same event.
     */
    async recordTransfer(input: {
      tenantId: string;
      transferId: string;
      set: Partial<TransferDoc>;
      event: TransferEvent;
    }): Promise<void> {
      const tenantDb = new TenantDb(db, input.tenantId);
      const after = await tenantDb
        .collection(transfers)
        .findOneAndUpdate(
          { _id: input.transferId },
          { $set: { ...input.set, updatedAt: input.event.at }, $addToSet: { history: input.event } },
          { returnDocument: 'after' },
        );
      const status = input.set.status;
      if (!after || !status || status === 'pending') return;
      await recordEvent(tenantDb, {
        type: `transfer.${status}`,
        key: `transfer:${input.transferId}:${status}`,
        ...transferEvent(after),
      });
    },
  };
}
