import fc from 'fast-check';
import { ObjectId, type Collection, type Document } from 'mongodb';
import { TestDeps } from '../helpers/stack';

/**
 * Our FerretDB build pushes query filters down into SQL as a superset condition
 * (scripts/servers/ferretdb/_overlay/internal/backends/sqlite/prefilter.go) and FerretDB still
 * runs the whole filter on what SQL returns. The property: pushing down never changes an answer.
 * The reference answer is the same filter wrapped in a double $nor, which the prefilter leaves
 * alone, so FerretDB reads every document and decides in Go as upstream does.
 */
let deps: TestDeps;

beforeAll(async () => {
  deps = await TestDeps.open();
});
afterAll(() => deps.close());

const unpushed = (filter: Document): Document => ({ $nor: [{ $nor: [filter] }] });

async function ids(col: Collection<Document>, filter: Document): Promise<string[]> {
  const docs = await col.find(filter, { projection: { _id: 1 } }).toArray();
  return docs.map((d) => String(d._id)).sort();
}

async function explain(col: Collection<Document>, filter: Document): Promise<{ pushdown: boolean; plan: string }> {
  const res = await col.find(filter).explain();
  return { pushdown: res.filterPushdown === true, plan: JSON.stringify(res.queryPlanner) };
}

/** Strings chosen to sit on every edge of the JSON text comparison. */
const WORDS = [
  'active',
  'draft',
  'Acme',
  'acme',
  'ACME',
  'Linen shirt',
  'LINEN',
  'lin%en',
  'lin_en',
  'a"quote',
  'back\\slash',
  '<b>&amp;',
  'line\u2028sep',
  'tab\there',
  'Crème brûlée',
  '\u212Aettle', // Kelvin sign: /kettle/i matches it in Go's regexp
  'glass',
  'gla\u017Fs', // long s: /glass/i matches it
  '',
  '[not an array]',
];

const SEEDED = [
  {
    _id: 'd1',
    tenantId: 't1',
    status: 'active',
    brand: 'Acme',
    tags: ['linen', 'summer'],
    title: { value: 'Linen shirt' },
  },
  { _id: 'd2', tenantId: 't1', status: 'draft', brand: 'acme', tags: 'Acme', title: { value: 'LINEN towel' } },
  { _id: 'd3', tenantId: 't2', status: 'active', brand: ['Acme', 'Globex'], title: { value: 'Cotton' } },
  { _id: 'd4', tenantId: 't1', status: ['active'], brand: '[Acme]', title: { value: '\u212Aettle' } },
  { _id: 'd5', tenantId: 't1', brand: 'a"quote', title: { value: 'gla\u017Fs' }, price: 5 },
  { _id: 'd6', tenantId: 't1', status: 'active', brand: '<b>&amp;', title: 'plain string title', price: 5.0 },
  { _id: 'd7', tenantId: 't1', status: 'active', brand: 'Crème brûlée', title: { value: 'lin%en' } },
  { _id: 'd8', tenantId: 't1', status: 'active', brand: 'line\u2028sep', nested: { brand: 'Acme' } },
  { _id: new ObjectId('65a000000000000000000001'), tenantId: 't1', status: 'active', brand: 'Acme' },
  { _id: 'd10', tenantId: 't1', status: null, brand: null, tags: ['x'] },
];

describe('FerretDB filter pushdown (superset in SQL, exact in Go)', () => {
  let col: Collection<Document>;

  beforeAll(async () => {
    col = deps.db.collection('test_prefilter');
    await col.deleteMany({});
    await col.createIndex({ tenantId: 1, brand: 1 });
    await col.createIndex({ tenantId: 1, status: 1 });
    await col.insertMany(SEEDED as Document[]);
  });

  const cases: Array<[string, Document, string[]]> = [
    ['equality on a string', { tenantId: 't1', brand: 'Acme' }, ['65a000000000000000000001', 'd1']],
    ['equality matches an array holding the value', { brand: 'Acme' }, ['65a000000000000000000001', 'd1', 'd3']],
    ['equality is case-sensitive', { brand: 'acme' }, ['d2']],
    ['text that looks like an array is a string', { brand: '[Acme]' }, ['d4']],
    [
      '$in',
      { tenantId: 't1', status: { $in: ['active', 'draft'] } },
      ['65a000000000000000000001', 'd1', 'd2', 'd4', 'd6', 'd7', 'd8'],
    ],
    ['$eq', { status: { $eq: 'draft' } }, ['d2']],
    ['escaped characters are left to Go', { brand: 'a"quote' }, ['d5']],
    ['HTML characters are left to Go', { brand: '<b>&amp;' }, ['d6']],
    ['U+2028 is left to Go', { brand: 'line\u2028sep' }, ['d8']],
    ['non-ASCII strings', { brand: 'Crème brûlée' }, ['d7']],
    [
      'ObjectId _id among others',
      { tenantId: 't1', _id: new ObjectId('65a000000000000000000001') },
      ['65a000000000000000000001'],
    ],
    ['string _id with $in', { _id: { $in: ['d1', 'd2', 'nope'] } }, ['d1', 'd2']],
    ['regex, case-insensitive, on a dotted path', { 'title.value': /linen/i }, ['d1', 'd2']],
    ['regex, case-sensitive', { 'title.value': /LINEN/ }, ['d2']],
    ['regex with LIKE wildcards as literals', { 'title.value': /lin%en/i }, ['d7']],
    ['regex on an array field', { tags: /^linen$/ }, ['d1']],
    ['Kelvin sign folds to k', { 'title.value': /kettle/i }, ['d4']],
    ['long s folds to s', { 'title.value': /glass/i }, ['d5']],
    [
      '$or of regexes and $and',
      { $and: [{ tenantId: 't1' }, { $or: [{ brand: /acme/i }, { tags: /acme/i }] }] },
      ['65a000000000000000000001', 'd1', 'd2', 'd4'],
    ],
    [
      '$or with a branch that cannot be pushed',
      { $or: [{ brand: 'Acme' }, { price: 5 }] },
      ['65a000000000000000000001', 'd1', 'd3', 'd5', 'd6'],
    ],
    ['null matches missing', { tenantId: 't1', status: null }, ['d10', 'd5']],
    ['nested field equality', { 'nested.brand': 'Acme' }, ['d8']],
    ['no match', { tenantId: 't1', brand: 'Nobody' }, []],
  ];

  test.each(cases)('%s', async (_name, filter, expected) => {
    const reference = await ids(col, unpushed(filter));
    expect(reference).toEqual([...expected].sort());
    expect(await ids(col, filter)).toEqual(reference);
    expect(await col.countDocuments(filter)).toBe(reference.length);
  });

  test('a filter on indexed fields is pushed down and served by an index', async () => {
    const { pushdown, plan } = await explain(col, { tenantId: 't1', brand: { $in: ['Acme'] } });
    expect(pushdown).toBe(true);
    expect(plan).toMatch(/USING INDEX/);
    // the reference form is not pushed down: FerretDB reads every document
    expect((await explain(col, unpushed({ tenantId: 't1' }))).pushdown).toBe(false);
  });

  test('updates and deletes through a pushed-down filter touch exactly the matching documents', async () => {
    const other = deps.db.collection('test_prefilter_writes');
    await other.deleteMany({});
    await other.insertMany(SEEDED as Document[]);
    const updated = await other.updateMany(
      { tenantId: 't1', brand: { $in: ['Acme', 'acme'] } },
      { $set: { touched: true } },
    );
    expect(updated.modifiedCount).toBe(3);
    expect(await ids(other, { touched: true })).toEqual(['65a000000000000000000001', 'd1', 'd2']);
    const deleted = await other.deleteMany({ $or: [{ 'title.value': /linen/i }, { brand: 'Acme' }] });
    expect(deleted.deletedCount).toBe(4);
    expect(await other.countDocuments({})).toBe(SEEDED.length - 4);
  });

  test('generated documents and filters: the pushed-down answer equals the reference', async () => {
    const scratch = deps.db.collection('test_prefilter_fuzz');
    const word = fc.constantFrom(...WORDS);
    const value = fc.oneof(word, fc.array(word, { maxLength: 3 }), fc.constant(null), fc.integer({ min: 0, max: 3 }));
    const doc = fc.record({ a: value, b: value, c: fc.record({ d: value }) }, { requiredKeys: [] });
    const field = fc.constantFrom('a', 'b', 'c.d');
    // a RegExp's source writes U+2028 as \u2028, which the server's regex syntax refuses
    const literal = fc.constantFrom(
      ...WORDS.filter((w) => w && !w.includes('\u2028')),
      'lin',
      'ACM',
      'kettle',
      'glass',
      'e b',
    );
    const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const leaf = fc.oneof(
      fc.record({ f: field, v: word }).map(({ f, v }) => ({ [f]: v })),
      fc
        .record({ f: field, vs: fc.array(word, { minLength: 1, maxLength: 3 }) })
        .map(({ f, vs }) => ({ [f]: { $in: vs } })),
      fc
        .record({ f: field, s: literal, i: fc.boolean() })
        .map(({ f, s, i }) => ({ [f]: new RegExp(escape(s), i ? 'i' : '') })),
    );
    const filter = fc.oneof(
      leaf,
      fc.array(leaf, { minLength: 1, maxLength: 3 }).map((xs) => ({ $and: xs })),
      fc.array(leaf, { minLength: 1, maxLength: 3 }).map((xs) => ({ $or: xs })),
      fc.tuple(leaf, leaf).map(([x, y]) => ({ ...x, ...y })),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(doc, { minLength: 1, maxLength: 12 }),
        fc.array(filter, { minLength: 1, maxLength: 5 }),
        async (docs, filters) => {
          await scratch.deleteMany({});
          await scratch.insertMany(docs.map((d, i) => ({ _id: `g${i}`, ...d })) as Document[]);
          for (const f of filters) {
            expect(await ids(scratch, f)).toEqual(await ids(scratch, unpushed(f)));
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
