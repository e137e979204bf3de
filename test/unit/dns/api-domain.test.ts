import { describe, expect, it } from 'vitest';
import { ApiDomainNameError, apiDomainName, apiDomainUrl } from '../../../core/dns/index.js';

describe('apiDomainName', () => {
  it.each([
    [
      { shoot: 'api1', project: 'dev', externalDomain: 'shoots.gardenless.example' },
      'api.api1.dev.shoots.gardenless.example',
    ],
    [{ shoot: 'api1', project: 'dev', externalDomain: 'Shoots.Example.' }, 'api.api1.dev.shoots.example'],
    [{ shoot: 'a', project: 'b', externalDomain: 'c' }, 'api.a.b.c'],
  ])('derives %o', (input, expected) => {
    expect(apiDomainName(input)).toBe(expected);
  });

  it.each([
    ['an upper-case shoot', { shoot: 'Api1', project: 'dev', externalDomain: 'example' }, 'shoot'],
    ['a dot in the project', { shoot: 'api1', project: 'dev.x', externalDomain: 'example' }, 'project'],
    ['an empty external domain', { shoot: 'api1', project: 'dev', externalDomain: '' }, 'externalDomain'],
    ['an empty label in the domain', { shoot: 'api1', project: 'dev', externalDomain: 'a..example' }, 'externalDomain'],
    [
      'a name over 253 characters',
      { shoot: 'api1', project: 'dev', externalDomain: Array(5).fill('x'.repeat(60)).join('.') },
      'externalDomain',
    ],
  ])('rejects %s, naming the field', (_case, input, field) => {
    let error: unknown;
    try {
      apiDomainName(input);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ApiDomainNameError);
    expect(error).toMatchObject({ field, code: 'InvalidApiDomainName' });
  });
});

describe('apiDomainUrl', () => {
  it.each([
    ['http://127.0.0.2:31443', 'http://api.a.b.c:31443'],
    ['https://lb-1.elb.amazonaws.com', 'https://api.a.b.c'],
    ['http://[::1]:8080/', 'http://api.a.b.c:8080'],
  ])('keeps the scheme and port of %s', (externalUrl, expected) => {
    expect(apiDomainUrl('api.a.b.c', externalUrl)).toBe(expected);
  });
});
