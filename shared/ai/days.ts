/**
 * Calendar days in a tenant's time zone, for the daily AI token budget. Only Intl (the IANA data
 * Node ships), no offsets of our own: a zone's offset changes with DST and with its laws.
 */

const HOUR = 3_600_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    // throws RangeError for a zone Intl does not know, which is what a caller should see
    f = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The local calendar date of an instant in `timeZone`, as `YYYY-MM-DD`. */
export function localDate(now: Date, timeZone: string): string {
  const parts = formatter(timeZone).formatToParts(now);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)!.value;
  return `${part('year').padStart(4, '0')}-${part('month')}-${part('day')}`;
}

/** A `YYYY-MM-DD` date moved by `days` calendar days (no time zone involved: dates only). */
export function addDays(date: string, days: number): string {
  const [y, m, d] = date.split('-').map(Number);
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

/**
 * The first instant after `now` whose local date is no longer `now`'s: local midnight, or the
 * first minute of the next day where DST skips midnight. Found by bisection on localDate rather
 * than computed from an offset, so it is right by definition in every zone and across every
 * transition; a local day lasts at most 25 hours, so the next one has begun 48 hours later.
 */
export function nextLocalMidnight(now: Date, timeZone: string): Date {
  const today = localDate(now, timeZone);
  let lo = now.getTime();
  let hi = lo + 48 * HOUR;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (localDate(new Date(mid), timeZone) === today) lo = mid;
    else hi = mid;
  }
  return new Date(hi);
}

/** Whether Intl knows `timeZone` (an IANA name such as `America/Mexico_City`). */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}
