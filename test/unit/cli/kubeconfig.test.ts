import { describe, expect, it } from 'vitest';
import { expirationSeconds, kubeconfigOf } from '../../../cli/kubeconfig-command.js';

describe('shoot kubeconfig', () => {
  it.each([
    ['1h', 3600],
    ['10m', 600],
    ['90s', 90],
  ])('takes --expiration %s as %i seconds', (text, seconds) => {
    expect(expirationSeconds(text)).toBe(seconds);
  });

  it('refuses an expiration that is no duration or not whole seconds', () => {
    expect(() => expirationSeconds('soon')).toThrow(/--expiration: "soon" is not a duration/);
    expect(() => expirationSeconds('1500ms')).toThrow(/not a whole number of seconds/);
  });

  it('prints the kubeconfig the answer carries, decoded', () => {
    const yaml = 'apiVersion: v1\nkind: Config\n';
    expect(
      kubeconfigOf({ status: { kubeconfig: Buffer.from(yaml).toString('base64'), expirationTimestamp: '' } }),
    ).toBe(yaml);
  });
});
