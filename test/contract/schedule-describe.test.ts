import { describe, expect, it } from 'vitest';
import { describeSchedule, joinWords } from '../../src/contract/schedule/describe.js';

describe('describeSchedule: schedules in words (SPEC §13)', () => {
  it.each([
    ['30 2 * * *', 'Europe/Berlin', 'At 02:30 every day, Europe/Berlin'],
    ['@daily', 'UTC', 'At 00:00 every day, UTC'],
    ['@midnight', 'UTC', 'At 00:00 every day, UTC'],
    ['@hourly', 'UTC', 'At minute 0 past every hour, UTC'],
    ['@weekly', 'UTC', 'At 00:00 on Sunday, UTC'],
    ['@monthly', 'UTC', 'At 00:00 on day 1 of the month, UTC'],
    ['@yearly', 'UTC', 'At 00:00 on 1 January, UTC'],
    ['@annually', 'Asia/Tokyo', 'At 00:00 on 1 January, Asia/Tokyo'],
    ['* * * * *', 'UTC', 'Every minute, UTC'],
    ['*/10 * * * *', 'UTC', 'Every 10 minutes, UTC'],
    ['15 * * * *', 'UTC', 'At minute 15 past every hour, UTC'],
    ['0,30 * * * *', 'UTC', 'At minutes 0 and 30 past every hour, UTC'],
    ['30 8,12 * * *', 'UTC', 'At 08:30 and 12:30 every day, UTC'],
    ['0 8,12,18 * * *', 'UTC', 'At 08:00, 12:00 and 18:00 every day, UTC'],
    ['0 9 * * 1-5', 'America/New_York', 'At 09:00 on Monday to Friday, America/New_York'],
    ['0 9 * * MON-FRI', 'UTC', 'At 09:00 on Monday to Friday, UTC'],
    ['0 9 * * 7', 'UTC', 'At 09:00 on Sunday, UTC'],
    ['0 9 * * sat,sun', 'UTC', 'At 09:00 on Saturday and Sunday, UTC'],
    ['*/15 9-17 * * 1-5', 'UTC', 'Every 15 minutes, from 09:00 to 17:59, on Monday to Friday, UTC'],
    ['0 */6 * * *', 'UTC', 'At minute 0, every 6 hours, UTC'],
    ['5-10 3 * * *', 'UTC', 'Every minute from 5 to 10, in the 03:00 hour, UTC'],
    ['0 0 1,15 * *', 'UTC', 'At 00:00 on days 1 and 15 of the month, UTC'],
    ['0 0 1-7,15 * *', 'UTC', 'At 00:00 on days 1 to 7 and 15 of the month, UTC'],
    ['0 0 1,15 * FRI', 'UTC', 'At 00:00 on days 1 and 15 of the month or on Friday, UTC'],
    ['0 0 */2 * MON', 'UTC', 'At 00:00 on every 2nd day of the month if it is Monday, UTC'],
    ['0 0 1 JAN,JUL *', 'UTC', 'At 00:00 on day 1 of the month in January and July, UTC'],
    ['0 0 * 3-5 *', 'UTC', 'At 00:00 every day in March to May, UTC'],
    ['0 12 29 2 *', 'UTC', 'At 12:00 on 29 February, UTC'],
    // a step of a few values is spelled out; `a/n` runs to the field's end
    ['0 0 10-20/5 * *', 'UTC', 'At 00:00 on days 10, 15 and 20 of the month, UTC'],
    ['0 0 5/10 * *', 'UTC', 'At 00:00 on days 5, 15 and 25 of the month, UTC'],
    ['0 0 1-30/3 * *', 'UTC', 'At 00:00 on every 3rd day from day 1 to day 28 of the month, UTC'],
    [
      '0,15,30,45 1,2 * * *',
      'UTC',
      'At minutes 0, 15, 30 and 45, in the hours 01:00 and 02:00, UTC',
    ],
    ['@every 5m', 'UTC', 'Every 5 minutes (counted from the Unix epoch, in every zone alike)'],
    [
      '@every 1h30m',
      'Europe/Berlin',
      'Every 1 hour 30 minutes (counted from the Unix epoch, in every zone alike)',
    ],
    ['@every 60s', 'UTC', 'Every minute (counted from the Unix epoch, in every zone alike)'],
    ['@every 49h', 'UTC', 'Every 2 days 1 hour (counted from the Unix epoch, in every zone alike)'],
    ['61 * * * *', 'UTC', '61 * * * * (invalid schedule)'],
  ])('%s in %s', (expr, zone, words) => {
    expect(describeSchedule(expr, zone)).toBe(words);
  });

  it.each([
    // the examples: 6 fields are `sec min hour dom month dow`
    ['*/30 * * * * *', 'Every 30 seconds, UTC'],
    ['0 */30 * * * *', 'Every 30 minutes, UTC'],
    ['30 * * * * *', 'At second 30 of every minute, UTC'],
    ['* * * * * *', 'Every second, UTC'],
    ['0,30 * * * * *', 'At seconds 0 and 30 of every minute, UTC'],
    ['5-10 * * * * *', 'Every second from 5 to 10 of every minute, UTC'],
    ['0-10/5 * * * * *', 'At seconds 0, 5 and 10 of every minute, UTC'],
    ['*/10 * 9-17 * * *', 'Every 10 seconds, from 09:00 to 17:59, UTC'],
    ['*/10 0-4 * * * *', 'Every 10 seconds, in minutes 0 to 4 of every hour, UTC'],
    ['*/10 */15 * * * *', 'Every 10 seconds, in every 15th minute of every hour, UTC'],
    ['*/5 30 9 * * *', 'Every 5 seconds, in the minute 09:30, UTC'],
    ['30 5 * * * *', 'At second 30, in minute 5 of every hour, UTC'],
    ['30 30 9 * * 1-5', 'At 09:30:30 on Monday to Friday, UTC'],
    ['0 30 9 * * *', 'At 09:30 every day, UTC'],
    ['0 0 9-17 * * *', 'At minute 0, from 09:00 to 17:59, UTC'],
    ['59 59 23 31 12 *', 'At 23:59:59 on 31 December, UTC'],
    ['@every 10s', 'Every 10 seconds (counted from the Unix epoch, in every zone alike)'],
    ['@every 1s', 'Every second (counted from the Unix epoch, in every zone alike)'],
    ['@every 90s', 'Every 1 minute 30 seconds (counted from the Unix epoch, in every zone alike)'],
  ])('seconds: %s', (expr, words) => {
    expect(describeSchedule(expr, 'UTC')).toBe(words);
  });

  it.each([
    // a step that does not divide its field is not an interval (56 → 0 is 4 minutes)
    ['*/7 * * * *', 'Every 7th minute from 0 to 56 past every hour, UTC'],
    ['*/7 * * * * *', 'Every 7th second from 0 to 56 of every minute, UTC'],
    ['*/45 * * * *', 'At minutes 0 and 45 past every hour, UTC'],
    ['0-59/20 * * * *', 'Every 20 minutes, UTC'],
    ['10-42/5 * * * *', 'Every 5th minute from 10 to 40 past every hour, UTC'],
    ['*/15 */2 * * *', 'Every 15 minutes, in every 2nd hour, UTC'],
    ['0 */5 * * *', 'At 00:00, 05:00, 10:00, 15:00 and 20:00 every day, UTC'],
    ['23 0-20/2 * * *', 'At minute 23, in every 2nd hour from 00:00 to 20:59, UTC'],
    ['0 0 */10 * *', 'At 00:00 on days 1, 11, 21 and 31 of the month, UTC'],
    ['0 0 * * */2', 'At 00:00 on Sunday, Tuesday, Thursday and Saturday, UTC'],
    ['0 0 * */3 *', 'At 00:00 every day in January, April, July and October, UTC'],
    // the day rule: either when both are restricted, both when one starts with `*`
    ['0 0 1 * 0-6', 'At 00:00 every day, UTC'],
    ['0 0 1-31 * MON', 'At 00:00 every day, UTC'],
    ['0 0 */1 * MON', 'At 00:00 on Monday, UTC'],
    ['0 0 31 2 MON', 'At 00:00 on day 31 of the month or on Monday in February, UTC'],
    [
      '0 0 */2 * */3',
      'At 00:00 on every 2nd day of the month if it is Sunday, Wednesday or Saturday, UTC',
    ],
    ['0 12 * * 0,7', 'At 12:00 on Sunday, UTC'],
    ['0 0 * * 5-7', 'At 00:00 on Friday to Sunday, UTC'],
  ])('steps and days: %s', (expr, words) => {
    expect(describeSchedule(expr, 'UTC')).toBe(words);
  });

  it('defaults the zone to UTC', () => {
    expect(describeSchedule('0 3 * * *')).toBe('At 03:00 every day, UTC');
  });

  it('joins word lists', () => {
    expect(joinWords([])).toBe('');
    expect(joinWords(['a'])).toBe('a');
    expect(joinWords(['a', 'b'])).toBe('a and b');
    expect(joinWords(['a', 'b', 'c'], 'or')).toBe('a, b or c');
  });
});
