/**
 * SPEC §3 DST rules, spring-forward and fall-back days of 2026, for fixed-time
 * and wildcard jobs in the five zones the spec names. Expectations are local
 * RFC 3339 strings, so the offset shows which pass of a repeated hour fired.
 */
import { describe, expect, it } from 'vitest';
import { localFires } from '../helpers/fires.js';

describe('America/New_York (02:00 → 03:00 on 2026-03-08; 02:00 → 01:00 on 2026-11-01)', () => {
  const tz = 'America/New_York';
  it('spring forward: a fixed-time job in the gap fires once, at the first instant after it', () => {
    expect(localFires('30 2 * * *', tz, '2026-03-07T12:00:00Z', 2)).toEqual([
      '2026-03-08T03:00:00-04:00',
      '2026-03-09T02:30:00-04:00',
    ]);
    // two matching times inside the gap still give one fire
    expect(localFires('0,15,45 2 * * *', tz, '2026-03-08T06:00:00Z', 2)).toEqual([
      '2026-03-08T03:00:00-04:00',
      '2026-03-09T02:00:00-04:00',
    ]);
    // a match in the gap and one right after it coincide: one fire
    expect(localFires('0 2,3 * * *', tz, '2026-03-08T06:00:00Z', 2)).toEqual([
      '2026-03-08T03:00:00-04:00',
      '2026-03-08T03:00:00-04:00'.replace('08T03', '09T02'),
    ]);
  });
  it('spring forward: a wildcard job has no fires in the gap', () => {
    expect(localFires('*/30 * * * *', tz, '2026-03-08T06:00:00Z', 4)).toEqual([
      '2026-03-08T01:30:00-05:00',
      '2026-03-08T03:00:00-04:00',
      '2026-03-08T03:30:00-04:00',
      '2026-03-08T04:00:00-04:00',
    ]);
    expect(localFires('15 * * * *', tz, '2026-03-08T06:00:00Z', 2)).toEqual([
      '2026-03-08T01:15:00-05:00',
      '2026-03-08T03:15:00-04:00',
    ]);
  });
  it('fall back: a fixed-time job in the repeated hour fires once, in the first pass', () => {
    expect(localFires('30 1 * * *', tz, '2026-10-31T12:00:00Z', 2)).toEqual([
      '2026-11-01T01:30:00-04:00',
      '2026-11-02T01:30:00-05:00',
    ]);
    // starting inside the second pass does not fire it again
    expect(localFires('30 1 * * *', tz, '2026-11-01T06:10:00Z', 1)).toEqual([
      '2026-11-02T01:30:00-05:00',
    ]);
  });
  it('fall back: a wildcard job fires in both passes', () => {
    expect(localFires('30 * * * *', tz, '2026-11-01T04:00:00Z', 4)).toEqual([
      '2026-11-01T00:30:00-04:00',
      '2026-11-01T01:30:00-04:00',
      '2026-11-01T01:30:00-05:00',
      '2026-11-01T02:30:00-05:00',
    ]);
  });
});

describe('Europe/Berlin (02:00 → 03:00 on 2026-03-29; 03:00 → 02:00 on 2026-10-25)', () => {
  const tz = 'Europe/Berlin';
  it('fixed-time jobs', () => {
    expect(localFires('30 2 * * *', tz, '2026-03-28T12:00:00Z', 2)).toEqual([
      '2026-03-29T03:00:00+02:00',
      '2026-03-30T02:30:00+02:00',
    ]);
    expect(localFires('30 2 * * *', tz, '2026-10-24T12:00:00Z', 2)).toEqual([
      '2026-10-25T02:30:00+02:00',
      '2026-10-26T02:30:00+01:00',
    ]);
    // only on Sundays: the gap fire keeps the date of the skipped time
    expect(localFires('30 2 * * 0', tz, '2026-03-28T12:00:00Z', 2)).toEqual([
      '2026-03-29T03:00:00+02:00',
      '2026-04-05T02:30:00+02:00',
    ]);
  });
  it('wildcard jobs', () => {
    expect(localFires('*/20 2 * * *', tz, '2026-03-29T00:00:00Z', 2)).toEqual([
      '2026-03-30T02:00:00+02:00',
      '2026-03-30T02:20:00+02:00',
    ]);
    expect(localFires('0 * * * *', tz, '2026-10-24T22:30:00Z', 4)).toEqual([
      '2026-10-25T01:00:00+02:00',
      '2026-10-25T02:00:00+02:00',
      '2026-10-25T02:00:00+01:00',
      '2026-10-25T03:00:00+01:00',
    ]);
  });
});

describe('Australia/Lord_Howe (30-minute shifts: 02:00 → 01:30 on 2026-04-05; 02:00 → 02:30 on 2026-10-04)', () => {
  const tz = 'Australia/Lord_Howe';
  it('fixed-time jobs', () => {
    expect(localFires('15 2 * * *', tz, '2026-10-03T00:00:00Z', 2)).toEqual([
      '2026-10-04T02:30:00+11:00',
      '2026-10-05T02:15:00+11:00',
    ]);
    expect(localFires('45 1 * * *', tz, '2026-04-04T00:00:00Z', 2)).toEqual([
      '2026-04-05T01:45:00+11:00',
      '2026-04-06T01:45:00+10:30',
    ]);
  });
  it('wildcard jobs', () => {
    expect(localFires('*/20 * * * *', tz, '2026-04-04T14:20:00Z', 4)).toEqual([
      '2026-04-05T01:40:00+11:00',
      '2026-04-05T01:40:00+10:30',
      '2026-04-05T02:00:00+10:30',
      '2026-04-05T02:20:00+10:30',
    ]);
    expect(localFires('*/20 * * * *', tz, '2026-10-03T15:00:00Z', 3)).toEqual([
      '2026-10-04T01:40:00+10:30',
      '2026-10-04T02:40:00+11:00',
      '2026-10-04T03:00:00+11:00',
    ]);
  });
});

describe('America/Santiago (midnight transitions: 00:00 → 23:00 on 2026-04-05; 00:00 → 01:00 on 2026-09-06)', () => {
  const tz = 'America/Santiago';
  it('a midnight job on the spring-forward day fires at 01:00', () => {
    expect(localFires('0 0 * * *', tz, '2026-09-05T00:00:00Z', 3)).toEqual([
      '2026-09-05T00:00:00-04:00',
      '2026-09-06T01:00:00-03:00',
      '2026-09-07T00:00:00-03:00',
    ]);
  });
  it('a Sunday-midnight job keeps its Sunday when midnight is skipped', () => {
    expect(localFires('30 0 * * SUN', tz, '2026-09-01T00:00:00Z', 2)).toEqual([
      '2026-09-06T01:00:00-03:00',
      '2026-09-13T00:30:00-03:00',
    ]);
  });
  it('fall back repeats 23:00–24:00 of Saturday: fixed-time once, wildcard twice', () => {
    expect(localFires('30 23 * * *', tz, '2026-04-04T12:00:00Z', 2)).toEqual([
      '2026-04-04T23:30:00-03:00',
      '2026-04-05T23:30:00-04:00',
    ]);
    expect(localFires('30 * * * *', tz, '2026-04-05T01:00:00Z', 4)).toEqual([
      '2026-04-04T22:30:00-03:00',
      '2026-04-04T23:30:00-03:00',
      '2026-04-04T23:30:00-04:00',
      '2026-04-05T00:30:00-04:00',
    ]);
  });
});

describe('America/Havana (midnight transitions: 00:00 → 01:00 on 2026-03-08; 01:00 → 00:00 on 2026-11-01)', () => {
  const tz = 'America/Havana';
  it('spring forward at midnight', () => {
    expect(localFires('0 0 * * *', tz, '2026-03-07T12:00:00Z', 2)).toEqual([
      '2026-03-08T01:00:00-04:00',
      '2026-03-09T00:00:00-04:00',
    ]);
    expect(localFires('*/30 * * * *', tz, '2026-03-08T04:00:00Z', 3)).toEqual([
      '2026-03-07T23:30:00-05:00',
      '2026-03-08T01:00:00-04:00',
      '2026-03-08T01:30:00-04:00',
    ]);
  });
  it('fall back repeats midnight: the daily job fires once, the wildcard twice', () => {
    expect(localFires('0 0 * * *', tz, '2026-10-31T12:00:00Z', 2)).toEqual([
      '2026-11-01T00:00:00-04:00',
      '2026-11-02T00:00:00-05:00',
    ]);
    expect(localFires('*/30 * * * *', tz, '2026-11-01T03:50:00Z', 5)).toEqual([
      '2026-11-01T00:00:00-04:00',
      '2026-11-01T00:30:00-04:00',
      '2026-11-01T00:00:00-05:00',
      '2026-11-01T00:30:00-05:00',
      '2026-11-01T01:00:00-05:00',
    ]);
  });
});
