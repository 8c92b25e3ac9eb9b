import type { JournalEntry, StockDoc } from './collections';

/**
 * How a stock document's journal is stored: as one JSON text, not as an array of documents.
 *
 * Every change of a SKU's stock rewrites its whole stock document, and the journal is most of it
 * (four consumption entries are 4.4 KB of a 6 KB document). FerretDB decodes, re-encodes and
 * re-indexes a document field by field with each value's type, so a journal of documents costs
 * more than all the rest of the write; as one string it costs about what its bytes do: a write of
 * a document holding four consumption entries went from 2.6 to 2.0 ms. Nothing queries inside the
 * journal (its entries are looked up by id in the document read, and become documents of their
 * own in material_movements, the ledger), so the text loses nothing. A document written before
 * this keeps its array of documents until its next write; both read the same.
 */

/** Fields of a journal entry (and of its lots) that hold dates. */
const DATE_KEYS = new Set(['at', 'receivedDate', 'expirationDate']);

/** The journal as stored. An undefined member is kept as null, as the driver stores one. */
export function encodeJournal(journal: JournalEntry[]): string {
  return JSON.stringify(journal, (_key, value: unknown) => (value === undefined ? null : value));
}

function decodeJournal(stored: unknown): JournalEntry[] {
  if (typeof stored !== 'string') return (stored as JournalEntry[] | undefined) ?? [];
  return JSON.parse(stored, (key, value: unknown) =>
    DATE_KEYS.has(key) && typeof value === 'string' ? new Date(value) : value,
  ) as JournalEntry[];
}

/** A stock document as read from the database, its journal as entries again (null stays null). */
export function decodeStock<D extends StockDoc | null | undefined>(stored: D): D {
  if (!stored) return stored;
  return { ...stored, journal: decodeJournal((stored as { journal: unknown }).journal) };
}
