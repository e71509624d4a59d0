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
    ['0 0 10-20/5 * *', 'UTC', 'At 00:00 on every 5th day from day 10 to day 20 of the month, UTC'],
    [
      '0 0 5/10 * *',
      'UTC',
      'At 00:00 on every 10th day from day 5 to the last day of the month, UTC',
    ],
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
