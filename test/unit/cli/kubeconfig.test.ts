import { describe, expect, it } from 'vitest';
import { shootKubeconfig } from '../../../cli/kubeconfig-command.js';

describe('shootKubeconfig', () => {
  it('names the API domain as the server, in one context for the shoot', () => {
    expect(shootKubeconfig({ project: 'dev', name: 'web', server: 'https://api.web.dev.shoots.example' })).toEqual({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'dev--web', cluster: { server: 'https://api.web.dev.shoots.example' } }],
      contexts: [{ name: 'dev--web', context: { cluster: 'dev--web', user: 'dev--web' } }],
      users: [{ name: 'dev--web', user: {} }],
      'current-context': 'dev--web',
    });
  });
});
