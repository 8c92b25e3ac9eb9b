import { decodeStock, encodeJournal } from '../../shared/materials/stock-codec';
import type { JournalEntry, StockDoc } from '../../shared/materials/collections';

/** The journal stored as one text (shared/materials/stock-codec.ts) reads back as the entries written. */
const entry = (over: Partial<JournalEntry> = {}): JournalEntry => ({
  movementId: 'mmv_1',
  sku: 'FLOUR',
  kind: 'material',
  type: 'consumption',
  locationId: 'loc_a',
  toLocationId: null,
  quantityMinor: 220,
  quantity: 0.22,
  unit: 'kg',
  requested: { quantity: 0.22, unit: 'kg' },
  lots: [
    {
      lotNumber: 'L-1',
      quantity: 0.22,
      costPerUnit: 2.5,
      currency: 'USD',
      receivedDate: new Date('2026-11-01T08:00:00.000Z'),
      expirationDate: null,
    },
    { lotNumber: 'L-2', quantity: 1, costPerUnit: 3, expirationDate: new Date('2027-01-31T00:00:00.000Z') },
  ],
  cost: { total: 0.55, currency: 'USD' },
  consumption: { id: 'bom:P:production:r1', reference: { type: 'production', id: 'r1' } },
  reason: 'production r1',
  actor: 'key_1',
  idempotencyKey: null,
  at: new Date('2026-11-27T10:00:00.123Z'),
  ...over,
});

const doc = (journal: unknown) => ({ _id: 't:FLOUR', sku: 'FLOUR', journal, version: 3 }) as unknown as StockDoc;

describe('stock codec', () => {
  test('entries round-trip through the text: dates as dates, nulls, nested lots and costs', () => {
    const journal = [entry(), entry({ movementId: 'mmv_2', type: 'receipt', cost: null, consumption: null })];
    const text = encodeJournal(journal);
    expect(typeof text).toBe('string');
    const back = decodeStock(doc(text)).journal;
    expect(back).toEqual(journal);
    expect(back[0].at).toBeInstanceOf(Date);
    expect(back[0].lots[0].receivedDate).toBeInstanceOf(Date);
    expect(back[0].lots[1].expirationDate).toBeInstanceOf(Date);
  });

  test('an undefined member is kept as null, as the driver stores one', () => {
    const back = decodeStock(doc(encodeJournal([entry({ voided: undefined })]))).journal;
    expect(back[0]).toHaveProperty('voided', null);
  });

  test('a journal stored as an array of entries (written before) reads as it is; no document stays none', () => {
    const journal = [entry()];
    expect(decodeStock(doc(journal)).journal).toBe(journal);
    expect(decodeStock(doc(encodeJournal([]))).journal).toEqual([]);
    expect(decodeStock(null)).toBeNull();
    expect(decodeStock(undefined)).toBeUndefined();
  });

  test('the rest of the document is left as it is', () => {
    const d = decodeStock(doc(encodeJournal([entry()])));
    expect(d).toMatchObject({ _id: 't:FLOUR', sku: 'FLOUR', version: 3 });
  });
});
