/**
 * ISO 8601 weeks (`2026-W48`: Monday 23 to Sunday 29 November 2026), as `POST /api/reflect`
 * takes them and as an `<input type="week">` writes them. A week belongs to the year of its
 * Thursday, so 2026-12-31 is in 2026-W53 and 2027-01-01 too.
 */

const DAY_MS = 86_400_000;
const WEEK = /^(\d{4})-W(\d{2})$/;
const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** A calendar day at UTC midnight, so that adding days never meets a daylight-saving change. */
function utcDay(year: number, month: number, day: number): Date {
  return new Date(Date.UTC(year, month, day));
}

/** `YYYY-MM-DD` of a UTC day. */
function isoDate(day: Date): string {
  return day.toISOString().slice(0, 10);
}

function weekOfUtc(day: Date): string {
  // The Thursday of the day's week decides the year; the week is counted from that year's 1 January.
  const weekday = day.getUTCDay() || 7;
  const thursday = new Date(day.getTime() + (4 - weekday) * DAY_MS);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - utcDay(year, 0, 1).getTime()) / DAY_MS / 7) + 1;
  return `${year}-W${String(week).padStart(2, "0")}`;
}

/** The ISO week of a local date (today, by default). */
export function weekOf(date: Date = new Date()): string {
  return weekOfUtc(utcDay(date.getFullYear(), date.getMonth(), date.getDate()));
}

/** Whether `text` is an ISO week that exists (`2026-W53` does, `2027-W53` does not). */
export function isWeek(text: string): boolean {
  const monday = mondayOf(text);
  return monday !== null && weekOfUtc(monday) === text;
}

/** The Monday of `week` (at UTC midnight), or null if it is not written as a week. */
function mondayOf(week: string): Date | null {
  const match = WEEK.exec(week);
  if (!match) return null;
  const year = Number(match[1]);
  const number = Number(match[2]);
  if (number < 1 || number > 53) return null;
  // 4 January is always in week 1.
  const january4 = utcDay(year, 0, 4);
  const week1Monday = january4.getTime() - ((january4.getUTCDay() || 7) - 1) * DAY_MS;
  return new Date(week1Monday + (number - 1) * 7 * DAY_MS);
}

/** The week `by` weeks after `week` (before it when negative). */
export function shiftWeek(week: string, by: number): string {
  const monday = mondayOf(week);
  if (!monday) throw new Error(`${week} is not an ISO week like 2026-W48`);
  return weekOfUtc(new Date(monday.getTime() + by * 7 * DAY_MS));
}

/** The first and last day of `week`, as `YYYY-MM-DD`. */
export function weekDays(week: string): { from: string; to: string } {
  const monday = mondayOf(week);
  if (!monday) throw new Error(`${week} is not an ISO week like 2026-W48`);
  return { from: isoDate(monday), to: isoDate(new Date(monday.getTime() + 6 * DAY_MS)) };
}

/** The weekday of a `YYYY-MM-DD` date, in English (`Monday`). */
export function weekdayOf(date: string): string {
  const [year, month, day] = date.split("-").map(Number);
  return WEEKDAYS[utcDay(year ?? 1970, (month ?? 1) - 1, day ?? 1).getUTCDay()] ?? "";
}
