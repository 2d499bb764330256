// How every page writes times (web/core/format.js) under Node's test runner: the same words
// the PDF prints, as boxoffice_core::local_time's tests have them.

import { test } from "node:test";
import assert from "node:assert/strict";
import { eventTime, eventClock, money } from "../../web/core/format.js";

const WINTER = "2027-01-06T19:30:00Z";
const SUMMER = "2027-07-06T18:30:00Z";

test("an event time reads in its zone with the abbreviation of that day", () => {
  assert.equal(eventTime(WINTER, "Europe/Berlin"), "Wed 6 Jan 2027, 20:30 CET");
  assert.equal(eventTime(SUMMER, "Europe/Berlin"), "Tue 6 Jul 2027, 20:30 CEST");
  assert.equal(eventTime(WINTER, "America/New_York"), "Wed 6 Jan 2027, 14:30 EST");
  assert.equal(eventTime(WINTER, "UTC"), "Wed 6 Jan 2027, 19:30 UTC");
});

test("a time of day reads in the zone too", () => {
  assert.equal(eventClock(WINTER, "Europe/London"), "19:30 GMT");
  assert.equal(eventClock(SUMMER, "Europe/Lisbon"), "19:30 WEST");
});

test("a zone the browser does not know reads as UTC rather than failing", () => {
  assert.equal(eventTime(WINTER, "Mars/Olympus"), "Wed 6 Jan 2027, 19:30 UTC");
});

test("money is written with its currency's sign", () => {
  assert.equal(money(27000, "EUR", "en-GB"), "€270.00");
});

test("the console reads a start typed as local time in the event's zone", async () => {
  const { inZone } = await import("../../web/admin/event-new.js");
  assert.equal(inZone("2030-03-01T20:30", "Europe/Berlin"), "2030-03-01T19:30:00.000Z");
  assert.equal(inZone("2030-07-01T20:30", "Europe/Berlin"), "2030-07-01T18:30:00.000Z");
  assert.equal(inZone("2030-03-01T20:30", "UTC"), "2030-03-01T20:30:00.000Z");
  assert.equal(inZone("2030-11-03T01:30", "America/New_York"), "2030-11-03T05:30:00.000Z");
});
