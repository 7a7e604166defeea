// ISO weeks, as the reflect view picks them and `POST /api/reflect` takes them.
import { describe, expect, it } from "vitest";
import { isWeek, shiftWeek, weekDays, weekdayOf, weekOf } from "../src/weeks";

describe("ISO weeks", () => {
  it("names the week of a day, by the year of its Thursday", () => {
    expect(weekOf(new Date(2026, 10, 23))).toBe("2026-W48"); // a Monday
    expect(weekOf(new Date(2026, 10, 29, 23, 59))).toBe("2026-W48"); // its Sunday, late
    expect(weekOf(new Date(2026, 10, 30))).toBe("2026-W49");
    // 2026 ends on a Thursday: its last days and the first of 2027 are 2026-W53.
    expect(weekOf(new Date(2026, 11, 31))).toBe("2026-W53");
    expect(weekOf(new Date(2027, 0, 3))).toBe("2026-W53");
    expect(weekOf(new Date(2027, 0, 4))).toBe("2027-W01");
    // 2024-12-30 is a Monday in the week of 2025's first Thursday.
    expect(weekOf(new Date(2024, 11, 30))).toBe("2025-W01");
  });

  it("gives a week's days and moves between weeks across years", () => {
    expect(weekDays("2026-W48")).toEqual({ from: "2026-11-23", to: "2026-11-29" });
    expect(weekDays("2025-W01")).toEqual({ from: "2024-12-30", to: "2025-01-05" });
    expect(shiftWeek("2026-W48", -1)).toBe("2026-W47");
    expect(shiftWeek("2026-W53", 1)).toBe("2027-W01");
    expect(shiftWeek("2027-W01", -1)).toBe("2026-W53");
    expect(shiftWeek("2026-W01", -1)).toBe("2025-W52");
    expect(() => shiftWeek("2026-48", 1)).toThrow(/not an ISO week/);
  });

  it("knows which weeks exist, and the weekday of a date", () => {
    expect(isWeek("2026-W53")).toBe(true);
    expect(isWeek("2027-W53")).toBe(false);
    expect(isWeek("2026-W00")).toBe(false);
    expect(isWeek("2026-48")).toBe(false);
    expect(weekdayOf("2026-11-23")).toBe("Monday");
    expect(weekdayOf("2026-11-29")).toBe("Sunday");
  });
});
