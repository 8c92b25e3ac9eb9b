import fc from 'fast-check';
import { Binary, BSONRegExp, Long, ObjectId, type Collection, type Document } from 'mongodb';
import { TestDeps } from '../helpers/stack';

/**
 * Our FerretDB build pushes query filters down into SQL as a superset condition
 * (scripts/servers/ferretdb/_overlay/internal/backends/sqlite/prefilter.go) and FerretDB still
 * runs the whole filter on what SQL returns. The property: pushing down never changes an answer.
 * The reference answer is the same filter wrapped in a double $nor, which the prefilter leaves
 * alone, so FerretDB reads every document and decides in Go as upstream does.
 *
 * A sort on top-level fields goes down too (scripts/servers/ferretdb/_overlay/internal/backends/sqlite/order.go
 * and internal/handler/sort_pushdown.go): SQL orders the rows and a page stops after its limit. The
 * reference for a sorted page is the same page through aggregate, whose $sort FerretDB runs in Go.
 *
 * A count (countDocuments, which is aggregate [$match, $group {$sum: 1}], and the count command)
 * is answered in SQL where the filter has an exact SQL form E (backends/sqlite/exact.go, count.go,
 * handler/count_pushdown.go): rows of the superset where E holds are counted, the others decoded
 * and tested. The reference count is the double $nor again, which has no exact form.
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

  test('a field holding a regular expression matches the same expression, pushed down or not', async () => {
    // FerretDB compares a stored regex with the query's (same "(?opts)pattern"), and sjson stores it
    // as its pattern's JSON string: "a\\.b" does not contain the literal a.b
    const stored = deps.db.collection('test_prefilter_stored_regex');
    await stored.deleteMany({});
    await stored.insertMany([
      { _id: 'r1', a: new BSONRegExp('a\\.b', '') },
      { _id: 'r2', c: { a: new BSONRegExp('a\\.b', '') } },
      { _id: 'r3', a: new BSONRegExp('(?i)linen', '') },
      { _id: 'r4', a: new BSONRegExp('linen', '') },
      { _id: 'r5', a: 'xa.by' },
    ] as Document[]);
    const cases: Array<[Document, string[]]> = [
      [{ a: /a\.b/ }, ['r1', 'r5']],
      [{ a: { $regex: 'a\\.b' } }, ['r1', 'r5']],
      [{ 'c.a': /a\.b/ }, ['r2']],
      [{ a: /linen/i }, ['r3']],
      [{ a: /linen/ }, ['r4']],
    ];
    for (const [filter, expected] of cases) {
      expect(await ids(stored, unpushed(filter))).toEqual(expected);
      expect(await ids(stored, filter)).toEqual(expected);
      expect(await stored.countDocuments(filter)).toBe(expected.length);
    }
  });

  describe('count pushdown', () => {
    /** The count the driver's countDocuments gets, and the count command's. */
    async function counts(col: Collection<Document>, filter: Document): Promise<[number, number]> {
      const res = await col.db.command({ count: col.collectionName, query: filter });
      return [await col.countDocuments(filter), res.n as number];
    }

    test('a search count with an index on (tenantId, search), by regex and by $regex', async () => {
      const products = deps.db.collection('test_prefilter_count_search');
      await products.deleteMany({});
      await products.createIndex({ tenantId: 1, search: 1 });
      await products.insertMany([
        // as the app stores it (shared/products/search.ts): parts on lines of their own
        { _id: 'p1', tenantId: 'ten_a', search: 'sku-1\nlinen shirt\nacme' },
        { _id: 'p2', tenantId: 'ten_a', search: 'sku-2\ncotton shirt' },
        { _id: 'p3', tenantId: 'ten_a', search: 'washed linen towel' },
        { _id: 'p4', tenantId: 'ten_b', search: 'linen shirt' },
        { _id: 'p5', tenantId: 'ten_a', search: 'a "linen" quote' }, // escaped in JSON: decoded, still counted
        { _id: 'p6', tenantId: 'ten_a', search: ['linen', 'array'] }, // an array: decoded, still counted
        { _id: 'p7', tenantId: 'ten_a', search: new BSONRegExp('linen', '') }, // a stored regex equal to the query's
        { _id: 'p8', tenantId: 'ten_a', search: new BSONRegExp('linens', '') }, // not equal: no match
        { _id: 'p9', tenantId: 'ten_a', title: 'linen', search: null },
        { _id: 'p10', tenantId: 'ten_a', description: 'linen' },
        { _id: 'p11', tenantId: 'ten_a', search: 'tab\there line\u2028sep <b>' }, // JSON: tab\\there …\\u2028 \\u003cb\\u003e
        // JSON strings that are not strings: an ObjectId's hex, a binary's base64
        { _id: 'p12', tenantId: 'ten_a', search: new ObjectId('cafe00000000000000000001') },
        { _id: 'p13', tenantId: 'ten_a', search: new Binary(Buffer.from('linenAAA', 'base64')) },
      ] as Document[]);
      const search = { tenantId: 'ten_a', search: /linen/ };
      expect(await counts(products, search)).toEqual([5, 5]);
      expect(await counts(products, { tenantId: 'ten_a', search: { $regex: 'linen' } })).toEqual([5, 5]);
      expect(await counts(products, { tenantId: 'ten_a', $and: [{ search: /linen/ }, { search: /shirt/ }] })).toEqual([
        1, 1,
      ]);
      expect(await products.countDocuments(unpushed(search))).toBe(5);
      // literals that the JSON text of an escaped string holds, and the string does not
      for (const literal of ['there', 'u2028s', '003cb']) {
        expect(await counts(products, { tenantId: 'ten_a', search: { $regex: literal } })).toEqual([0, 0]);
        expect(await counts(products, { tenantId: 'ten_a', search: new RegExp(literal, 'i') })).toEqual([0, 0]);
      }
      expect(await counts(products, { tenantId: 'ten_a', search: /here/ })).toEqual([1, 1]);
      expect(await counts(products, { tenantId: 'ten_a', search: /nlinen/ })).toEqual([0, 0]); // "\nlinen" in JSON
      for (const filter of [{ search: /cafe/ }, { search: 'cafe00000000000000000001' }, { search: 'linenAAA' }]) {
        expect(await counts(products, { tenantId: 'ten_a', ...filter })).toEqual([0, 0]);
      }
      expect(await ids(products, search)).toEqual(['p1', 'p3', 'p5', 'p6', 'p7']);
      const { plan } = await explain(products, search);
      expect(plan).toMatch(/USING INDEX \w+_tenantId_1_search_1/);
    });

    test('nothing matches: countDocuments answers 0, and the aggregate no document', async () => {
      const col = deps.db.collection('test_prefilter');
      expect(await counts(col, { tenantId: 't1', brand: 'Nobody' })).toEqual([0, 0]);
      expect(await counts(col, { tenantId: 'nobody' })).toEqual([0, 0]);
      const pipeline = [{ $match: { tenantId: 'nobody' } }, { $group: { _id: 1, n: { $sum: 1 } } }];
      expect(await col.aggregate(pipeline).toArray()).toEqual([]);
      expect(await deps.db.collection('test_prefilter_no_such_collection').countDocuments({ a: 'x' })).toBe(0);
    });

    test('the counting $group answers as FerretDB would: its _id, the count as an int or a long', async () => {
      const col = deps.db.collection('test_prefilter');
      for (const [id, sum] of [
        [1, 1],
        ['all', 1],
        [null, 1],
        [true, new Long(1)],
        [2.5, new Long(1)],
      ] as Array<[unknown, unknown]>) {
        for (const filter of [{ tenantId: 't1' }, { tenantId: 't1', brand: /acme/i }, {}]) {
          const answer = async (f: Document) =>
            col
              .aggregate([{ $match: f }, { $group: { _id: id, count: { $sum: sum } } }], { useBigInt64: true })
              .toArray();
          const got = await answer(filter);
          expect(got).toEqual(await answer(unpushed(filter)));
          expect(got).toHaveLength(1);
        }
      }
    });

    test('other $group stages are not taken for a count', async () => {
      const col = deps.db.collection('test_prefilter');
      const filter = { tenantId: 't1', status: { $in: ['active', 'draft'] } };
      const byBrand = async (f: Document, group: Document) => {
        const docs = await col.aggregate([{ $match: f }, { $group: group }]).toArray();
        return docs.sort((x, y) => JSON.stringify(x._id).localeCompare(JSON.stringify(y._id)));
      };
      for (const group of [
        { _id: '$brand', n: { $sum: 1 } },
        { _id: 1, n: { $sum: 2 } },
        { _id: 1, n: { $sum: '$price' } },
        { _id: 1, n: { $count: {} } },
        { _id: { k: 1 }, n: { $sum: 1 } },
        { _id: 1, n: { $sum: 1 }, m: { $sum: 1 } },
      ]) {
        const got = await byBrand(filter, group);
        expect(got).toEqual(await byBrand(unpushed(filter), group));
      }
      expect((await byBrand(filter, { _id: '$brand', n: { $sum: 1 } })).length).toBeGreaterThan(1);
      // skip and limit go the usual way
      expect(await col.countDocuments(filter, { skip: 2, limit: 3 })).toBe(3);
      expect(await col.countDocuments(filter, { skip: 6 })).toBe(1);
    });

    test('generated documents and filters: every count equals the reference', async () => {
      const scratch = deps.db.collection('test_prefilter_count_fuzz');
      // values whose JSON text in sjson is a string without being one: ObjectIds (hex), binaries
      // (base64) and regular expressions (their pattern), holding the literals and words below
      const oids = ['cafe00000000000000000001', '65a000000000000000000001', '0000000000000000000dead0'];
      const odd = fc.constantFrom<unknown>(
        ...oids.map((h) => new ObjectId(h)),
        new Binary(Buffer.from('cafe', 'base64')),
        new Binary(Buffer.from('AcmeAcme', 'base64')),
        new Binary(Buffer.from('linenAAA', 'base64')),
        new BSONRegExp('Acme', ''),
        new BSONRegExp('linen', ''),
        new BSONRegExp('linens', 'i'),
        new BSONRegExp('a\\.b', ''),
        new BSONRegExp('active', ''),
      );
      const strings = [...WORDS, 'a.b', 'x a.b y', 'café', 'cafe', 'AcmeAcme', 'dead', ...oids];
      const word = fc.constantFrom(...strings);
      const scalar = fc.oneof(
        { weight: 6, arbitrary: word },
        { weight: 1, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.integer({ min: 0, max: 3 }) },
        { weight: 2, arbitrary: odd },
        { weight: 2, arbitrary: fc.constantFrom('tab\there', 'line\u2028sep', '<b>&amp;', 'a"quote') },
      );
      const value = fc.oneof(
        { weight: 4, arbitrary: scalar },
        { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) },
      );
      const doc = fc.record({ a: value, b: value, c: fc.record({ a: value }) }, { requiredKeys: [] });
      const field = fc.constantFrom('a', 'b', 'c.a', '_id');
      // literals: words, hex-only ones an ObjectId's hex holds, ones the pattern escapes, and ones
      // that only the JSON text of an escaped string holds ('tab\there' is "tab\\there")
      const literal = fc.oneof(
        { weight: 1, arbitrary: fc.constantFrom('there', 'u2028s', '003cb', 'u003e') },
        {
          weight: 2,
          arbitrary: fc.constantFrom(
            ...strings.filter((w) => w && !w.includes('\u2028')),
            'lin',
            'ACM',
            'cme',
            'kettle',
            'glass',
            'e b',
            'cafe',
            'ace',
            'dead',
            '65a0',
            '0001',
            'g0',
          ),
        },
      );
      const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const regex = fc.record({ s: literal, i: fc.boolean(), form: fc.nat(2) }).map(({ s, i, form }) => {
        if (form === 0) return new RegExp(escape(s), i ? 'i' : '');
        return i ? { $regex: escape(s), $options: 'i' } : { $regex: escape(s) };
      });
      const leaf = fc.oneof(
        fc.record({ f: field, v: word }).map(({ f, v }) => ({ [f]: v })),
        fc.record({ f: field, v: word }).map(({ f, v }) => ({ [f]: { $eq: v } })),
        fc
          .record({ f: field, vs: fc.array(word, { minLength: 1, maxLength: 3 }) })
          .map(({ f, vs }) => ({ [f]: { $in: vs } })),
        fc.record({ f: field, r: regex }).map(({ f, r }) => ({ [f]: r })),
        fc.record({ f: field, r: regex }).map(({ f, r }) => ({ [f]: r })),
        fc.record({ f: field, r: regex }).map(({ f, r }) => ({ [f]: r })),
        // shapes without an exact form: counted the usual way
        fc.record({ f: field }).map(({ f }) => ({ [f]: null })),
        fc.record({ f: field, v: word }).map(({ f, v }) => ({ [f]: { $ne: v } })),
        fc.record({ f: field, s: literal }).map(({ f, s }) => ({ [f]: new RegExp('^' + escape(s)) })),
        fc.record({ f: field, n: fc.integer({ min: 0, max: 3 }) }).map(({ f, n }) => ({ [f]: n })),
      );
      const filter: fc.Arbitrary<Document> = fc.oneof(
        leaf,
        fc.array(leaf, { minLength: 1, maxLength: 3 }).map((xs) => ({ $and: xs })),
        fc.array(leaf, { minLength: 1, maxLength: 3 }).map((xs) => ({ $or: xs })),
        fc.tuple(leaf, leaf).map(([x, y]) => ({ ...x, ...y })),
        fc.tuple(leaf, fc.array(leaf, { minLength: 1, maxLength: 2 })).map(([x, ys]) => ({ ...x, $or: ys })),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.array(doc, { minLength: 1, maxLength: 12 }),
          fc.array(filter, { minLength: 1, maxLength: 5 }),
          async (docs, filters) => {
            await scratch.deleteMany({});
            await scratch.insertMany(docs.map((d, i) => ({ _id: `g${i}`, ...d })) as Document[]);
            for (const f of filters) {
              const reference = await scratch.countDocuments(unpushed(f));
              const found = await ids(scratch, f);
              expect(found).toEqual(await ids(scratch, unpushed(f)));
              expect(await counts(scratch, f)).toEqual([reference, reference]);
              expect(found).toHaveLength(reference);
            }
          },
        ),
        { numRuns: 300 },
      );
    });
  });

  describe('sort pushdown', () => {
    let sorted: Collection<Document>;
    const oid = (n: number) => new ObjectId(`65a00000000000000000000${n}`);
    const SORTABLE = [
      { _id: 's1', k: 'b', at: new Date('2026-01-02T00:00:00Z'), on: true },
      { _id: 's2', k: 'a', at: new Date('2026-01-01T00:00:00Z'), on: false },
      { _id: 's3', k: null, at: new Date('1960-01-01T00:00:00Z') },
      { _id: 's4', at: new Date('2026-01-01T00:00:00Z'), on: true },
      { _id: 's5', k: oid(1), at: new Date('2026-01-03T00:00:00Z') },
      { _id: 's6', k: true, on: null },
      { _id: 's7', k: new Date(0), at: null },
      { _id: 's8', k: 'é', at: new Date('2026-01-03T00:00:00Z') },
      { _id: 's9', k: 'B', at: new Date('2026-01-02T00:00:00Z') },
      { _id: 'i1', k: 5, tag: 'number' },
      { _id: 'i2', k: -2.5, tag: 'number' },
      { _id: 'i3', k: 2 ** 53 + 1, tag: 'number' },
      { _id: 'i4', k: 5.0000001, tag: 'number' },
      { _id: 'n2', k: ['a', 'z'], tag: 'array' },
      { _id: 'n3', k: { x: 1 }, tag: 'document' },
    ];

    beforeAll(async () => {
      sorted = deps.db.collection('test_prefilter_sort');
      await sorted.deleteMany({});
      await sorted.insertMany(SORTABLE as Document[]);
    });

    async function page(col: Collection<Document>, filter: Document, sort: Document, skip: number, limit: number) {
      const docs = await col.find(filter, { sort, skip, limit, projection: { _id: 1 } }).toArray();
      return docs.map((d) => String(d._id));
    }

    async function reference(col: Collection<Document>, filter: Document, sort: Document, skip: number, limit: number) {
      const stages: Document[] = [{ $match: unpushed(filter) }, { $sort: sort }, { $skip: skip }];
      if (limit) stages.push({ $limit: limit });
      const docs = await col.aggregate([...stages, { $project: { _id: 1 } }]).toArray();
      return docs.map((d) => String(d._id));
    }

    const sortCases: Array<[string, Document, Document, string[]]> = [
      [
        'null and missing < strings (byte order) < ObjectId < bool < date',
        { tag: { $exists: false } },
        { k: 1, _id: 1 },
        ['s3', 's4', 's9', 's2', 's1', 's8', 's5', 's6', 's7'],
      ],
      [
        'descending dates, then _id',
        { tag: null },
        { at: -1, _id: -1 },
        ['s8', 's5', 's9', 's1', 's4', 's2', 's3', 's7', 's6'],
      ],
      ['booleans', { on: { $in: [true, false] } }, { on: 1, _id: 1 }, ['s2', 's1', 's4']],
      ['numbers, integers and reals together', { tag: 'number' }, { k: -1, _id: 1 }, ['i3', 'i4', 'i1', 'i2']],
      [
        'an array or a document among the matches: sorted in Go',
        { tag: { $ne: 'number' } },
        { k: 1, _id: 1 },
        ['s3', 's4', 's9', 'n2', 's2', 's1', 's8', 'n3', 's5', 's6', 's7'],
      ],
    ];

    test.each(sortCases)('%s', async (_name, filter, sort, expected) => {
      const want = await reference(sorted, filter, sort, 0, 0);
      expect(want).toEqual(expected);
      expect(await page(sorted, filter, sort, 0, 0)).toEqual(want);
      expect(await page(sorted, filter, sort, 2, 3)).toEqual(want.slice(2, 5));
    });

    test('a page of an equality and a regex: each branch ordered on its index, the page as Go sorts', async () => {
      const col = deps.db.collection('test_prefilter_sort_branches');
      await col.deleteMany({});
      await col.createIndex({ s: 1, b: 1, a: -1, _id: -1 });
      const words = ['tree', 'oak', 'elm', 'beech', 'ash', 'yew'];
      const values = [3, 'm', null, new Date(5), 'A', -1.5, 'z', oid(2), true, 7];
      await col.insertMany(
        Array.from({ length: 40 }, (_, i) => ({
          _id: `p${String(i).padStart(2, '0')}`,
          s: i % 3 ? 'x' : 'y',
          b: i === 7 ? ['elm', 'oak'] : words[i % words.length],
          ...(i % 11 === 4 ? {} : { a: values[(i * 7) % values.length] }),
        })) as Document[],
      );
      const filter = { s: 'x', b: /e/ };
      for (const sort of [{ a: -1, _id: -1 }, { a: 1, _id: 1 }, { _id: -1 }, { b: 1, a: -1, _id: 1 }] as Document[]) {
        for (const [skip, limit] of [
          [0, 5],
          [3, 4],
          [0, 1],
        ]) {
          expect(await page(col, filter, sort, skip, limit)).toEqual(await reference(col, filter, sort, skip, limit));
        }
      }
    });

    test('generated documents, filters and sorts: a pushed-down sort answers as Go sorts', async () => {
      const scratch = deps.db.collection('test_prefilter_sort_fuzz');
      const simple = fc.oneof(
        fc.constantFrom(...WORDS),
        fc.constant(null),
        fc.boolean(),
        fc.integer({ min: -1e12, max: 4e12 }).map((ms) => new Date(ms)),
        fc.constantFrom(oid(1), oid(2)),
      );
      const value = fc.oneof(
        { weight: 6, arbitrary: simple },
        { weight: 1, arbitrary: fc.integer({ min: -2, max: 2 }) },
        { weight: 1, arbitrary: fc.double({ min: -3, max: 3, noNaN: true }) },
        { weight: 1, arbitrary: fc.array(simple, { maxLength: 2 }) },
      );
      const doc = fc.record({ a: value, b: value, s: fc.constantFrom('x', 'y') }, { requiredKeys: [] });
      // an equality with a regex runs as one SELECT per branch, each ordered on its index (order.go)
      await scratch.createIndex({ s: 1, b: 1, a: 1, _id: 1 });
      const filter = fc.oneof(
        fc.constant({}),
        fc.constantFrom('x', 'y').map((s) => ({ s })),
        fc.constantFrom(...WORDS.slice(0, 6)).map((w) => ({ a: { $in: [w, 'active'] } })),
        fc.constantFrom('x', 'y').map((s) => ({ s, b: /e/ })),
        fc.constantFrom('x', 'y').map((s) => ({ s, a: { $regex: 'a', $options: 'i' } })),
      );
      const sort = fc
        .tuple(fc.subarray(['a', 'b']), fc.array(fc.constantFrom(1, -1), { minLength: 3, maxLength: 3 }))
        .map(([fields, dirs]) => Object.fromEntries([...fields, '_id'].map((f, i) => [f, dirs[i]])));
      await fc.assert(
        fc.asyncProperty(
          fc.array(doc, { minLength: 1, maxLength: 12 }),
          filter,
          sort,
          fc.nat(3),
          fc.nat(5),
          async (docs, f, so, skip, limit) => {
            await scratch.deleteMany({});
            await scratch.insertMany(
              docs.map((d, i) => ({ _id: `g${String(i).padStart(2, '0')}`, ...d })) as Document[],
            );
            expect(await page(scratch, f, so, skip, limit)).toEqual(await reference(scratch, f, so, skip, limit));
          },
        ),
        { numRuns: 150 },
      );
    });
  });
});
