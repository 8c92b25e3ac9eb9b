import fc from 'fast-check';
import { addDays, isTimeZone, localDate, nextLocalMidnight } from '../../shared/ai/days';

/** Local days for the AI token budget: dates and the next local midnight in any IANA zone. */

const at = (iso: string) => new Date(iso);

describe('localDate', () => {
  test.each([
    // [zone, instant, local date]
    ['UTC', '2026-05-10T00:00:00Z', '2026-05-10'],
    ['America/Mexico_City', '2026-05-10T05:59:59.999Z', '2026-05-09'], // UTC-6 all year since 2022
    ['America/Mexico_City', '2026-05-10T06:00:00Z', '2026-05-10'],
    ['Asia/Kolkata', '2026-05-09T18:29:59Z', '2026-05-09'], // UTC+5:30
    ['Asia/Kolkata', '2026-05-09T18:30:00Z', '2026-05-10'],
    ['Pacific/Kiritimati', '2026-12-31T10:00:00Z', '2027-01-01'], // UTC+14
    ['America/New_York', '2026-03-08T04:59:59Z', '2026-03-07'], // EST
    ['America/New_York', '2026-03-08T05:00:00Z', '2026-03-08'],
  ])('%s at %s is %s', (zone, iso, date) => {
    expect(localDate(at(iso), zone)).toBe(date);
  });

  test('an unknown zone throws', () => {
    expect(() => localDate(new Date(), 'Mars/Olympus_Mons')).toThrow(RangeError);
    expect(isTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(isTimeZone('America/Mexico_City')).toBe(true);
  });
});

test.each([
  ['2026-03-01', -1, '2026-02-28'],
  ['2028-03-01', -1, '2028-02-29'],
  ['2026-12-31', 1, '2027-01-01'],
  ['2026-05-10', -6, '2026-05-04'],
  ['2026-05-10', 0, '2026-05-10'],
])('addDays(%s, %d) = %s', (date, n, expected) => {
  expect(addDays(date, n)).toBe(expected);
});

describe('nextLocalMidnight', () => {
  test.each([
    // [zone, now, next midnight as a UTC instant]
    ['UTC', '2026-05-10T13:00:00Z', '2026-05-11T00:00:00.000Z'],
    ['America/Mexico_City', '2026-05-09T12:00:00Z', '2026-05-10T06:00:00.000Z'],
    ['America/Mexico_City', '2026-05-10T05:59:59Z', '2026-05-10T06:00:00.000Z'],
    // the day DST starts in New York (2026-03-08) is 23 hours long: it begins at 05:00Z (EST) and ends at 04:00Z (EDT)
    ['America/New_York', '2026-03-07T12:00:00Z', '2026-03-08T05:00:00.000Z'],
    ['America/New_York', '2026-03-08T12:00:00Z', '2026-03-09T04:00:00.000Z'],
    // the day DST ends (2026-11-01) is 25 hours long
    ['America/New_York', '2026-11-01T04:00:00Z', '2026-11-02T05:00:00.000Z'],
    ['Asia/Kolkata', '2026-05-09T20:00:00Z', '2026-05-10T18:30:00.000Z'],
  ])('%s from %s is %s', (zone, now, expected) => {
    expect(nextLocalMidnight(at(now), zone).toISOString()).toBe(expected);
  });

  test('exactly at midnight, the next one is a whole local day later', () => {
    expect(nextLocalMidnight(at('2026-05-10T06:00:00Z'), 'America/Mexico_City').toISOString()).toBe(
      '2026-05-11T06:00:00.000Z',
    );
  });

  const zones = [
    'UTC',
    'America/Mexico_City',
    'America/New_York',
    'America/Santiago', // DST starts at midnight: some local midnights do not exist
    'America/Sao_Paulo',
    'Europe/London',
    'Australia/Lord_Howe', // a 30-minute DST shift
    'Asia/Kathmandu', // UTC+5:45
    'Pacific/Chatham', // UTC+12:45 / +13:45
    'Pacific/Apia',
  ];

  test('in any zone, at any instant: later, another date, and the instant before is still today', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2035, 0, 1) }),
        (zone, ms) => {
          const now = new Date(ms);
          const next = nextLocalMidnight(now, zone);
          expect(next.getTime()).toBeGreaterThan(ms);
          expect(next.getTime() - ms).toBeLessThanOrEqual(25 * 3_600_000);
          expect(localDate(next, zone)).not.toBe(localDate(now, zone));
          expect(localDate(new Date(next.getTime() - 1), zone)).toBe(localDate(now, zone));
        },
      ),
      { numRuns: 500 },
    );
  });
});
