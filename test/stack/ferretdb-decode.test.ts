import fc from 'fast-check';
import { Binary, BSON, BSONRegExp, Double, Int32, Long, ObjectId, Timestamp, type Document } from 'mongodb';
import { TestDeps } from '../helpers/stack';

/**
 * Our FerretDB build decodes the documents a query reads with a one-pass decoder of its own
 * (scripts/servers/ferretdb/_overlay/internal/handler/sjson/unmarshal_fast.go) instead of
 * upstream's sjson.Unmarshal. The property: every document reads back exactly as it was written,
 * byte for byte in BSON, whatever its types (each BSON type FerretDB stores, the numeric ones
 * wrapped so that an int32 is not read back as a double), its nesting and its strings (escapes,
 * control characters, HTML characters, U+2028, astral characters).
 */
let deps: TestDeps;

beforeAll(async () => {
  deps = await TestDeps.open();
});
afterAll(() => deps.close());

/** Strings on every edge of JSON's escapes, and Go's (<, >, &, U+2028 and U+2029 escaped too). */
const TRICKY = [
  '',
  '"',
  '\\',
  '\\"',
  '/',
  '\n',
  '\t',
  '\u0000',
  '\u0001\u001f',
  '<b>&amp;</b>',
  '\u2028\u2029',
  '😀',
  'é',
];

// FerretDB moves an `_id` key to the front of every document, nested ones too, on insert
// (types/document_validation.go), before any decoding: the keys leave `_id` out.
const key = fc
  .oneof(fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,5}$/), fc.constantFrom('é', '日本', 'a b'))
  .filter((k) => k !== '_id');
const text = fc.oneof(fc.constantFrom(...TRICKY), fc.string({ unit: 'binary', maxLength: 12 }), fc.string());

const scalar = fc.oneof(
  text,
  fc.integer().map((n) => new Int32(n)),
  // FerretDB stores -0 as 0 on insert (types/document_validation.go), before any decoding
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => new Double(x === 0 ? 0 : x)),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((n) => Long.fromBigInt(n)),
  fc.integer({ min: -8.64e12, max: 8.64e12 }).map((ms) => new Date(ms)),
  fc.uint8Array({ minLength: 12, maxLength: 12 }).map((b) => new ObjectId(Buffer.from(b))),
  fc
    .record({ bytes: fc.uint8Array({ maxLength: 20 }), subtype: fc.constantFrom(0, 5, 128) })
    .map(({ bytes, subtype }) => new Binary(Buffer.from(bytes), subtype)),
  fc
    .record({ pattern: fc.constantFrom('^a', 'lin.n', 'x\\d+'), options: fc.constantFrom('', 'i', 'ims') })
    .map(({ pattern, options }) => new BSONRegExp(pattern, options)),
  fc.record({ t: fc.nat(), i: fc.nat() }).map(({ t, i }) => new Timestamp({ t, i })),
  fc.boolean(),
  fc.constant(null),
);

const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('array'), tie('document')),
  // FerretDB refuses arrays directly inside arrays
  array: fc.array(fc.oneof({ depthSize: 'small' }, scalar, tie('document')), { maxLength: 4 }),
  document: fc.dictionary(key, tie('value'), { maxKeys: 5 }),
}));

const asBSON = (doc: Document): string => Buffer.from(BSON.serialize(doc)).toString('hex');

test('generated documents of every type read back byte for byte as they were written', async () => {
  const col = deps.db.collection('test_decode');
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.dictionary(key, value, { maxKeys: 8 }), { minLength: 1, maxLength: 10 }),
      async (bodies) => {
        await col.deleteMany({});
        const docs = bodies.map((body, i) => ({ _id: i, ...body }));
        await col.insertMany(docs as Document[]);
        const read = await col
          .find(
            {},
            { sort: { _id: 1 }, promoteValues: false, promoteLongs: false, promoteBuffers: false, bsonRegExp: true },
          )
          .toArray();
        expect(read.map(asBSON)).toEqual(docs.map(asBSON));
      },
    ),
    { numRuns: 200 },
  );
});

test('a product-shaped document with escaped text reads back as written', async () => {
  const col = deps.db.collection('test_decode_product');
  const product = {
    _id: 'p1',
    title: 'Linen "Classic" shirt <b>&</b>',
    description: 'Line one\nLine two\ttabbed \\ backslash \u2028 sep 😀',
    price: new Double(19.9),
    stock: new Int32(3),
    version: Long.fromNumber(2 ** 40),
    createdAt: new Date('2026-11-25T00:00:00Z'),
    variants: [
      { sku: 'A-1', options: { size: 'S' }, price: new Double(-1.5e-300) },
      { sku: 'A-2', options: {}, tags: [] },
    ],
    empty: {},
    none: null,
  };
  await col.deleteMany({});
  await col.insertOne(product as Document);
  const [read] = await col
    .find({ _id: 'p1' } as Document, {
      promoteValues: false,
      promoteLongs: false,
      promoteBuffers: false,
      bsonRegExp: true,
    })
    .toArray();
  expect(asBSON(read)).toBe(asBSON(product));
});
