import { describe, expect, it } from 'vitest';
import { checkBulkVerifyBody, checkVerifyBody } from '../../services/verify/schemas.js';

// The max_age body field of /verify and /bulk-verify (issue 20): optional, whole seconds, 0 or more; a bad one is a
// 400 naming the field, never a 500.

describe('max_age', () => {
  it('is optional and passed on as maxAge', () => {
    expect(checkVerifyBody({ email: 'a@example.com' })).toEqual({ value: { email: 'a@example.com' } });
    expect(checkVerifyBody({ email: 'a@example.com', max_age: 0 })).toEqual({
      value: { email: 'a@example.com', maxAge: 0 },
    });
    expect(checkBulkVerifyBody({ emails: ['a@example.com'], max_age: 3600 })).toEqual({
      value: { emails: ['a@example.com'], maxAge: 3600 },
    });
  });

  it.each([-1, 1.5, '60', null, true, Number.MAX_VALUE])('refuses %s', (maxAge) => {
    for (const checked of [
      checkVerifyBody({ email: 'a@example.com', max_age: maxAge }),
      checkBulkVerifyBody({ emails: ['a@example.com'], max_age: maxAge }),
    ]) {
      expect('error' in checked && checked.error.message).toBe(
        'max_age must be a whole number of seconds, 0 or more',
      );
    }
  });
});
