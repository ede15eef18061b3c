import { describe, expect, it } from 'vitest';
import { validationMessage, type SchemaError } from '../../services/http/validation-message.js';

const error = (keyword: string, instancePath: string, params: Record<string, unknown>, message?: string) =>
  ({ keyword, instancePath, params, message }) as SchemaError;

describe('validationMessage: the 400 text for a request that fails its schema', () => {
  it('names the field and lists an enum', () => {
    expect(
      validationMessage([error('enum', '/sort', { allowedValues: ['newest', 'votes'] })], 'querystring'),
    ).toBe('Invalid query parameter sort: must be one of "newest", "votes"');
  });

  it('lists the literals of a union (anyOf of consts)', () => {
    const errors = [
      error('const', '/value', { allowedValue: 1 }),
      error('const', '/value', { allowedValue: -1 }),
      error('anyOf', '/value', {}),
    ];
    expect(validationMessage(errors, 'body')).toBe('Invalid body field value: must be one of 1, -1');
  });

  it('says what is missing or unknown, without an empty path', () => {
    expect(validationMessage([error('required', '', { missingProperty: 'q' })], 'querystring')).toBe(
      'Missing query parameter q',
    );
    expect(validationMessage([error('required', '/author', { missingProperty: 'id' })], 'body')).toBe(
      'Missing body field author.id',
    );
    expect(validationMessage([error('additionalProperties', '', { additionalProperty: 'x' })], 'body')).toBe(
      'Unknown body field x',
    );
  });

  it('words types, lengths and patterns for people', () => {
    expect(validationMessage([error('type', '/emails/3', { type: 'string' })], 'body')).toBe(
      'Invalid body field emails[3]: must be a string',
    );
    expect(validationMessage([error('type', '/page', { type: 'integer' })], 'querystring')).toBe(
      'Invalid query parameter page: must be an integer',
    );
    expect(validationMessage([error('type', '', { type: 'object' })], 'body')).toBe(
      'Invalid body: must be an object',
    );
    expect(validationMessage([error('minLength', '/q', { limit: 1 })], 'querystring')).toBe(
      'Invalid query parameter q: must not be empty',
    );
    expect(validationMessage([error('pattern', '/tag', { pattern: '^[^\\u0000]*$' })], 'querystring')).toBe(
      'Invalid query parameter tag: must not contain NUL characters',
    );
    expect(validationMessage([error('minimum', '/limit', { limit: 1 }, 'must be >= 1')], 'querystring')).toBe(
      'Invalid query parameter limit: must be >= 1',
    );
  });
});
